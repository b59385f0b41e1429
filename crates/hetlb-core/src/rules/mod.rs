//! The balancing rules, written once as plain decisions with no I/O.
//!
//! A rule says how loads move; an engine ([`crate::exchange`], the planner; later the
//! simulator and the runtime) applies it. One file per family:
//!
//! | file | rules | source |
//! |---|---|---|
//! | [`dimension_exchange`] | `dem`, `dem-fixed`, `dem-improved`, `dem-hetero`, `oem` | Cybenko 1989; Chau & Fu Figs. 1, 2, 5; Rim et al. §§2–3 |
//! | [`cube_walking`] | `cwa`, `hybrid` | Wu & Shu 1996 as described by Rim et al. §5 |
//! | [`self_scheduling`] | `efp`, `static`, `proportional`, `self` | Aldasht, Ortega & Puntonet §§3–4, eq. (1) |
//! | [`delay_aware`] | sender-initiated balancing with a compensating factor | Mirtaheri & Grandinetti §§3–4, eqs. 5–25 |
//! | [`diffusion`] | `dishet`, `diffusion`, `random-biasing`, `dynamic-biasing`, `gdem` (any network) | Neelakantan §4; Cybenko 1989; Elsässer, Monien & Preis 2002; Xu & Lau 1992 |

pub mod cube_walking;
pub mod delay_aware;
pub mod diffusion;
pub mod dimension_exchange;
pub mod self_scheduling;
