//! The older names of the one balancing vocabulary, kept so that code written against them
//! goes on compiling: every rule is an [`Algorithm`](crate::Algorithm), balanced with
//! [`balance`](crate::balance) on a hypercube or [`balance_on`] on any network, with one
//! [`BalanceOptions`](crate::BalanceOptions) and one [`BalanceError`](crate::BalanceError).

pub use crate::algorithm::{balance_on, balance_on_within};

/// The older name of [`crate::Algorithm`].
pub type NetworkAlgorithm = crate::Algorithm;
/// The older name of [`crate::BalanceOptions`].
pub type NetworkOptions = crate::BalanceOptions;
/// The older name of [`crate::BalanceError`].
pub type NetworkError = crate::BalanceError;
/// The older name of [`crate::algorithm::UnknownAlgorithm`].
pub type UnknownNetworkAlgorithm = crate::algorithm::UnknownAlgorithm;
