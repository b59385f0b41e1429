//! What each reproduction shows a person: its results as [`Text`](hetlb_core::table::Text)
//! (lines and tables, our numbers beside the paper's) and as one CSV-shaped
//! [`Table`](hetlb_core::table::Table), for any face to render.
//!
//! The words, the columns and the decimals are chosen here once; the command line draws the
//! tables and writes the CSV, and a binding can show the same cells. The JSON form of each
//! reproduction is its typed report, serialised.
//!
//! | reproduction | module |
//! |---|---|
//! | `chau-table1`, `chau-table2` | [`chau`] |
//! | `chau-hetero` | [`chau_hetero`] |
//! | `rim-table1` | [`rim_table1`] |
//! | `rim-dynamic` | [`rim_dynamic`] |
//! | `rim-overhead` | [`overhead`] |
//! | `dishet` | [`dishet`] |
//! | `dishet-response` | [`dishet_response`] |
//! | `mirtaheri` | [`mirtaheri`] |
//! | `efp` | [`efp`] |
//! | `hetlb run matmul`, `hetlb run synthetic` | [`master_worker`] |

pub mod chau;
pub mod chau_hetero;
pub mod dishet;
pub mod dishet_response;
pub mod efp;
pub mod master_worker;
pub mod mirtaheri;
pub mod overhead;
pub mod rim_dynamic;
pub mod rim_table1;
