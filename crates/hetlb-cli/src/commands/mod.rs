//! One module per subcommand.

pub mod advise;
pub mod balance;
pub mod bench;
pub mod enumerate;
pub mod options;
pub mod replay;
pub mod report;
pub mod reproduce;
pub mod run;
pub mod simulate;
pub mod trace;
