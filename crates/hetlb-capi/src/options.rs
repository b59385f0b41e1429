//! The options string of `hetlb_balancer_create`: `key=value` pairs separated by `;`, each
//! an option of the library's one table ([`hetlb_peer::options`]: names, values, defaults
//! and bounds live there, and `hetlb options` prints them). Spaces around keys and values
//! are ignored, and so are empty pairs (`"a=1;;b=2;"`). An error names the pair:
//! `options: timeout=-1: -1 is not positive seconds of at most 1e9`.

use crate::error::CapiError;
use hetlb_peer::{BalancerConfig, PeerError};

/// The `key=value` pairs of an options string, in order, trimmed; empty pairs skipped (the
/// library's parser: [`hetlb_peer::options::pairs`]).
///
/// # Errors
/// [`CapiError::Invalid`] for a pair without `=` or a key given twice.
pub(crate) fn key_values(options: Option<&str>) -> Result<Vec<(&str, &str)>, CapiError> {
    hetlb_peer::options::pairs(options.unwrap_or(""))
        .map_err(|e| CapiError::Invalid(format!("options: {e}")))
}

/// Where each record keeps its position: `DIM` doubles (1 to 3) at byte `OFFSET`, from the
/// option `coords=OFFSET:DIM` of the C face (checked against the record size at each call).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coords {
    /// The byte offset of the first coordinate in a record.
    pub offset: usize,
    /// How many coordinates (1, 2 or 3).
    pub dim: usize,
}

impl Coords {
    /// Parses `OFFSET:DIM`.
    ///
    /// # Errors
    /// [`CapiError::Invalid`] naming the option for anything else, or a `DIM` outside 1..=3.
    pub fn parse(value: &str) -> Result<Self, CapiError> {
        let bad = |why: &str| CapiError::Invalid(format!("options: coords={value}: {why}"));
        let (offset, dim) = value
            .split_once(':')
            .ok_or_else(|| bad("expected OFFSET:DIM (bytes, then 1, 2 or 3 doubles)"))?;
        let offset = offset
            .trim()
            .parse::<usize>()
            .map_err(|_| bad("OFFSET is not a byte offset"))?;
        let dim = dim
            .trim()
            .parse::<usize>()
            .map_err(|_| bad("DIM is not 1, 2 or 3"))?;
        if !(1..=3).contains(&dim) {
            return Err(bad("DIM is not 1, 2 or 3"));
        }
        Ok(Self { offset, dim })
    }
}

/// A balancer configuration for `rule` with `options` (`None`: every default), each set by
/// name through the library's options table ([`hetlb_peer::options`]); the C face's own
/// option `coords=OFFSET:DIM` comes back beside it.
///
/// # Errors
/// [`CapiError::Invalid`] for an unknown rule, an unknown key, a pair without `=`, a key
/// given twice, or a value that cannot be parsed.
pub fn config(
    rule: &str,
    options: Option<&str>,
) -> Result<(BalancerConfig, Option<Coords>), CapiError> {
    let invalid = |m: String| CapiError::Invalid(m);
    let mut cfg = BalancerConfig::new(rule).map_err(|e| invalid(format!("rule: {e}")))?;
    let mut coords = None;
    for (key, value) in key_values(options)? {
        if key == "coords" {
            coords = Some(Coords::parse(value)?);
            continue;
        }
        cfg = cfg.set(key, value).map_err(|e| match e {
            PeerError::Config(c) if c.option_name().is_some() => {
                invalid(format!("options: {key}={value}: {}", c.reason()))
            }
            other => invalid(format!("options: {other}")),
        })?;
    }
    Ok((cfg, coords))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetlb_core::advice::Trigger;
    use hetlb_core::routing::Routing;
    use hetlb_core::transmission::Schedule;
    use hetlb_peer::Speeds;
    use std::time::Duration;

    #[test]
    fn the_issue_example_parses() {
        let (c, _) = config("dishet", Some("speeds=measured;timeout=10;topology=ring:8")).unwrap();
        assert_eq!(c.algorithm().name(), "dishet");
        assert_eq!(c.timeout_value(), Duration::from_secs(10));
        assert_eq!(c.speeds_kind(), &Speeds::Measured { window: 5 });
        let (c, _) = config("oem", Some(" schedule = pipeline ; speeds=fixed:1,2.5 ;")).unwrap();
        assert_eq!(c.schedule_kind(), Schedule::Pipeline);
        assert_eq!(c.speeds_kind(), &Speeds::Fixed(vec![1.0, 2.5]));
        assert!(config("dem", None).is_ok());
        let (c, _) = config(
            "cwa",
            Some("speeds=measured;trigger=auto:20:1.5;move_cost=1e-4,1e-7"),
        )
        .unwrap();
        assert_eq!(
            c.trigger_kind(),
            Trigger::Auto {
                horizon: 20,
                margin: 1.5
            }
        );
        assert!(config("dem", Some("")).is_ok());
        let (c, coords) = config(
            "auto",
            Some("speeds=measured;candidates=cwa,dishet;routing=direct;learn_cost=true"),
        )
        .unwrap();
        assert_eq!(coords, None);
        assert_eq!(c.rule_name(), "auto");
        assert_eq!(c.routing_kind(), Routing::Direct);
        c.check(4).unwrap();
    }

    #[test]
    fn coords_name_the_doubles_of_each_record() {
        let (_, coords) = config("dishet", Some("topology=ring:4; coords=8:2")).unwrap();
        assert_eq!(coords, Some(Coords { offset: 8, dim: 2 }));
    }

    #[test]
    fn bad_strings_are_refused_with_the_reason() {
        for (rule, options, needle) in [
            ("dem-superb", None, "dem-superb"),
            ("dem", Some("timeout"), "not key=value"),
            ("dem", Some("colour=blue"), "unknown option 'colour'"),
            ("dem", Some("timeout=-1"), "positive seconds"),
            ("dem", Some("timeout=nan"), "positive seconds"),
            ("dem", Some("timeout=1;timeout=2"), "twice"),
            ("dem", Some("speeds=fast"), "expected equal, measured"),
            (
                "dem",
                Some("speeds=fixed:1,0"),
                "capacity 2 (0) must be positive",
            ),
            ("dem", Some("speeds=measured:0"), "window"),
            ("dem", Some("schedule=sometimes"), "phased"),
            ("dem", Some("topology=ring:x"), "topology"),
            ("dem", Some("seed=-3"), "whole number"),
            ("gdem", Some("lambda=inf"), "(0, 1)"),
            ("dem", Some("trigger=soon"), "not a trigger"),
            ("dem", Some("trigger=auto:0"), "horizon"),
            ("dem", Some("move_cost=1"), "ALPHA,BETA"),
            ("dem", Some("move_cost=-1,0"), "not negative"),
            ("dem", Some("learn_cost=maybe"), "true or false"),
            ("dem", Some("routing=fast"), "routing"),
            ("dem", Some("candidates=cwa"), "only rule auto"),
            ("auto", Some("candidates=cwa,nope"), "nope"),
            ("dem", Some("coords=8"), "OFFSET:DIM"),
            ("dem", Some("coords=x:2"), "byte offset"),
            ("dem", Some("coords=8:4"), "1, 2 or 3"),
            ("dem", Some("coords=8:0"), "1, 2 or 3"),
        ] {
            let e = config(rule, options).unwrap_err();
            assert!(matches!(e, CapiError::Invalid(_)));
            assert!(e.to_string().contains(needle), "{options:?}: {e}");
        }
    }
}
