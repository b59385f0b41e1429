//! What the modules share.

/// Unit items for `loads`: rank `r` holds the next `loads[r]` ids, counting from 0 across the
/// ranks in order, so that the ids held after any moves are `0..sum` exactly once.
pub fn unit_items(loads: &[u64]) -> Vec<Vec<u64>> {
    let mut next = 0u64;
    loads
        .iter()
        .map(|&l| {
            let v: Vec<u64> = (next..next + l).collect();
            next += l;
            v
        })
        .collect()
}
