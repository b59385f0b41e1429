//! The options string of `hetlb_balancer_create`: `key=value` pairs separated by `;`.
//!
//! | key | value | default |
//! | --- | --- | --- |
//! | `topology` | a spec: `hypercube:3`, `ring:8`, `torus:2x4`, `file:PATH`, … | hypercube (power-of-two ranks), else ring |
//! | `speeds` | `equal`, `measured`, `measured:WINDOW`, `fixed:C0,C1,…` (one per rank) | `equal` |
//! | `schedule` | `phased`, `overlap`, `pipeline` | `phased` |
//! | `timeout` | seconds of silence after which a peer is judged stopped | 10 |
//! | `entry_timeout` | seconds to wait for a peer that has not reached the call, or `none` | `none` |
//! | `procs_per_group` | `P` of `hybrid` | `2^⌊n/2⌋` |
//! | `max_rounds` | round limit of the diffusion rules | 100000 |
//! | `seed` | seed of `random-biasing` | 0 |
//! | `lambda` | `λ` of `gdem` | the network's |
//! | `trigger` | `always`, or `auto[:HORIZON[:MARGIN]]`: move only when the gain predicted over HORIZON iterations exceeds MARGIN × the move's cost (needs measured speeds) | `always` |
//! | `move_cost` | `ALPHA,BETA`: seconds per message and per unit of load the trigger weighs | `0,0` |
//! | `learn_cost` | `true` or `false`: refit `move_cost` to the moves measured so far (it is the prior until the first) | `false` |
//! | `routing` | `paper` (hop by hop, as the rule moves the units) or `direct` (each unit once, straight to where the plan ends it) | `paper` |
//! | `candidates` | rule `auto`'s candidates, comma-separated (`cwa,dishet`) | `cwa,dem-hetero,oem,dishet` on a hypercube, `dishet,gdem` elsewhere |
//!
//! Spaces around keys and values are ignored, and so are empty pairs (`"a=1;;b=2;"`).

use crate::error::CapiError;
use hetlb_core::advice::{CostModel, Trigger};
use hetlb_core::algorithm::Algorithm;
use hetlb_core::routing::Routing;
use hetlb_core::transmission::Schedule;
use hetlb_peer::{AUTO, BalancerConfig, Speeds};
use std::time::Duration;

/// The window of `speeds=measured` without one.
pub(crate) const DEFAULT_SPEED_WINDOW: usize = 5;

/// The `key=value` pairs of an options string, in order, trimmed; empty pairs skipped.
///
/// # Errors
/// [`CapiError::Invalid`] for a pair without `=` or a key given twice.
pub(crate) fn key_values(options: Option<&str>) -> Result<Vec<(&str, &str)>, CapiError> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for pair in options.unwrap_or("").split(';') {
        let pair = pair.trim();
        if pair.is_empty() {
            continue;
        }
        let Some((key, value)) = pair.split_once('=') else {
            return Err(CapiError::Invalid(format!(
                "options: '{pair}' is not key=value (pairs are separated by ';')"
            )));
        };
        let (key, value) = (key.trim(), value.trim());
        if out.iter().any(|(k, _)| *k == key) {
            return Err(CapiError::Invalid(format!("options: {key} is given twice")));
        }
        out.push((key, value));
    }
    Ok(out)
}

/// A balancer configuration for `rule` with `options` (`None`: every default).
///
/// # Errors
/// [`CapiError::Invalid`] for an unknown rule, an unknown key, a pair without `=`, a key
/// given twice, or a value that cannot be parsed.
pub fn config(rule: &str, options: Option<&str>) -> Result<BalancerConfig, CapiError> {
    let invalid = |m: String| CapiError::Invalid(m);
    let mut cfg = BalancerConfig::new(rule).map_err(|e| invalid(format!("rule: {e}")))?;
    for (key, value) in key_values(options)? {
        let bad = |why: &str| invalid(format!("options: {key}={value}: {why}"));
        cfg = match key {
            "topology" => cfg.topology(value).map_err(|e| bad(&e.to_string()))?,
            "speeds" => cfg.speeds(speeds(value).map_err(|w| bad(&w))?),
            "schedule" => {
                let s: Schedule = value
                    .parse()
                    .map_err(|_| bad("expected phased, overlap or pipeline"))?;
                cfg.schedule(s)
            }
            "timeout" => cfg.timeout(seconds(value).map_err(|w| bad(&w))?),
            "entry_timeout" => cfg.entry_timeout(if value == "none" {
                None
            } else {
                Some(seconds(value).map_err(|w| bad(&w))?)
            }),
            "procs_per_group" => cfg.procs_per_group(Some(
                value
                    .parse()
                    .map_err(|_| bad("expected a positive integer"))?,
            )),
            "max_rounds" => cfg.max_rounds(Some(
                value
                    .parse()
                    .map_err(|_| bad("expected a positive integer"))?,
            )),
            "seed" => cfg.seed(value.parse().map_err(|_| bad("expected an integer"))?),
            "lambda" => {
                let l: f64 = value.parse().map_err(|_| bad("expected a number"))?;
                if !l.is_finite() {
                    return Err(bad("expected a finite number"));
                }
                cfg.lambda(Some(l))
            }
            "trigger" => cfg.trigger(value.parse::<Trigger>().map_err(|e| bad(&e))?),
            "move_cost" => cfg.cost_model(move_cost(value).map_err(|w| bad(&w))?),
            "learn_cost" => cfg.learn_cost(match value {
                "true" => true,
                "false" => false,
                _ => return Err(bad("expected true or false")),
            }),
            "routing" => cfg.routing(value.parse::<Routing>().map_err(|e| bad(&e.to_string()))?),
            "candidates" => {
                if rule != AUTO {
                    return Err(bad("only rule auto has candidates"));
                }
                let list = value
                    .split(',')
                    .map(|r| r.trim().parse::<Algorithm>())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| bad(&e.to_string()))?;
                if list.is_empty() {
                    return Err(bad("name at least one rule"));
                }
                cfg.candidates(list)
            }
            _ => {
                return Err(invalid(format!(
                    "options: unknown key '{key}' (known: topology, speeds, schedule, timeout, \
                     entry_timeout, procs_per_group, max_rounds, seed, lambda, trigger, \
                     move_cost, learn_cost, routing, candidates)"
                )));
            }
        };
    }
    Ok(cfg)
}

fn move_cost(value: &str) -> Result<CostModel, String> {
    let parts: Vec<f64> = value
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| "expected ALPHA,BETA (two numbers)".to_string())?;
    let [alpha, beta] = parts[..] else {
        return Err("expected ALPHA,BETA (two numbers)".into());
    };
    let model = CostModel {
        seconds_per_message: alpha,
        seconds_per_byte: beta,
    };
    model.validate().map_err(|e| e.to_string())?;
    Ok(model)
}

fn seconds(value: &str) -> Result<Duration, String> {
    let s: f64 = value
        .parse()
        .map_err(|_| "expected seconds (a number)".to_string())?;
    if !(s.is_finite() && s > 0.0 && s <= 1e9) {
        return Err("expected positive seconds, at most 1e9".into());
    }
    Ok(Duration::from_secs_f64(s))
}

fn speeds(value: &str) -> Result<Speeds, String> {
    match value.split_once(':') {
        None if value == "equal" => Ok(Speeds::Equal),
        None if value == "measured" => Ok(Speeds::Measured {
            window: DEFAULT_SPEED_WINDOW,
        }),
        Some(("measured", w)) => match w.parse::<usize>() {
            Ok(window) if window > 0 => Ok(Speeds::Measured { window }),
            _ => Err("the window must be a positive integer".into()),
        },
        Some(("fixed", list)) => {
            let c: Result<Vec<f64>, _> = list.split(',').map(|x| x.trim().parse::<f64>()).collect();
            match c {
                Ok(c) if c.iter().all(|x| x.is_finite() && *x > 0.0) => Ok(Speeds::Fixed(c)),
                _ => Err("fixed speeds are positive numbers separated by commas".into()),
            }
        }
        _ => Err("expected equal, measured, measured:WINDOW or fixed:C0,C1,...".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_example_parses() {
        let c = config("dishet", Some("speeds=measured;timeout=10;topology=ring:8")).unwrap();
        assert_eq!(c.algorithm().name(), "dishet");
        assert_eq!(c.timeout_value(), Duration::from_secs(10));
        assert_eq!(c.speeds_kind(), &Speeds::Measured { window: 5 });
        let c = config("oem", Some(" schedule = pipeline ; speeds=fixed:1,2.5 ;")).unwrap();
        assert_eq!(c.schedule_kind(), Schedule::Pipeline);
        assert_eq!(c.speeds_kind(), &Speeds::Fixed(vec![1.0, 2.5]));
        assert!(config("dem", None).is_ok());
        let c = config(
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
        let c = config(
            "auto",
            Some("speeds=measured;candidates=cwa,dishet;routing=direct;learn_cost=true"),
        )
        .unwrap();
        assert_eq!(c.rule_name(), "auto");
        assert_eq!(c.routing_kind(), Routing::Direct);
        c.check(4).unwrap();
    }

    #[test]
    fn bad_strings_are_refused_with_the_reason() {
        for (rule, options, needle) in [
            ("dem-superb", None, "dem-superb"),
            ("dem", Some("timeout"), "not key=value"),
            ("dem", Some("colour=blue"), "unknown key 'colour'"),
            ("dem", Some("timeout=-1"), "positive seconds"),
            ("dem", Some("timeout=nan"), "positive seconds"),
            ("dem", Some("timeout=1;timeout=2"), "twice"),
            ("dem", Some("speeds=fast"), "expected equal"),
            ("dem", Some("speeds=fixed:1,0"), "positive numbers"),
            ("dem", Some("speeds=measured:0"), "window"),
            ("dem", Some("schedule=sometimes"), "phased"),
            ("dem", Some("topology=ring:x"), "topology"),
            ("dem", Some("seed=-3"), "integer"),
            ("gdem", Some("lambda=inf"), "finite"),
            ("dem", Some("trigger=soon"), "not a trigger"),
            ("dem", Some("trigger=auto:0"), "horizon"),
            ("dem", Some("move_cost=1"), "ALPHA,BETA"),
            ("dem", Some("move_cost=-1,0"), "not negative"),
            ("dem", Some("learn_cost=yes"), "true or false"),
            ("dem", Some("routing=fast"), "routing"),
            ("dem", Some("candidates=cwa"), "only rule auto"),
            ("auto", Some("candidates=cwa,nope"), "nope"),
        ] {
            let e = config(rule, options).unwrap_err();
            assert!(matches!(e, CapiError::Invalid(_)));
            assert!(e.to_string().contains(needle), "{options:?}: {e}");
        }
    }
}
