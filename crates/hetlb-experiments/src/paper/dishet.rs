//! Neelakantan, *Decentralized load balancing in heterogeneous systems using diffusion
//! approach*, IJDPS 3(1) (2012), §5: what the text says about its comparison of DISHET with
//! random and dynamic biasing. Its figures did not survive the text extraction, so there is
//! no number to set beside ours; these statements say so with the results.

/// What the paper reports for the iteration counts (`hetlb reproduce dishet`).
pub const FINDINGS: &str = "Neelakantan (2012) §5 presents the comparison of DISHET, random biasing \
and dynamic biasing only as figures (iterations against total load, one per distribution). \
The figures did not survive the text extraction and the text states no number and no \
conclusion, so there is no published value to set beside each cell.";

/// What the paper reports for throughput and response time (`hetlb reproduce
/// dishet-response`).
pub const RESPONSE: &str = "Neelakantan (2012) §5 compares DISHET, random biasing and dynamic biasing by number of \
    iterations, throughput and average response time against the total load; those figures did \
    not survive in the text available, which gives no numbers: nothing published to compare with.";
