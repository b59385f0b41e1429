//! The value types of the options that have no text form of their own elsewhere: where the
//! capacities come from ([`Speeds`]), seconds, the move's cost, and rule `auto`'s candidates.

use hetlb_core::advice::CostModel;
use hetlb_core::algorithm::Algorithm;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The longest timeout any option takes, in seconds (about 31 years: no limit in practice,
/// but one a clock can always add to the present).
pub const MAX_SECONDS: f64 = 1e9;

/// Where the capacities that the rule weighs come from.
///
/// Its text form (`speeds=` of every face): `equal`, `measured`, `measured:WINDOW` or
/// `fixed:C0,C1,…`.
///
/// ```
/// use hetlb_peer::Speeds;
/// assert_eq!("measured:3".parse::<Speeds>().unwrap(), Speeds::Measured { window: 3 });
/// assert_eq!("fixed:1,2.5".parse::<Speeds>().unwrap(), Speeds::Fixed(vec![1.0, 2.5]));
/// assert_eq!(Speeds::Fixed(vec![1.0, 2.5]).to_string(), "fixed:1,2.5");
/// assert!("fast".parse::<Speeds>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Speeds {
    /// Every rank counts the same (the rules' uniform case).
    Equal,
    /// Given capacities, one per rank, positive and finite.
    Fixed(Vec<f64>),
    /// Measured: the application reports, with [`Balancer::record`], the units it processed
    /// and the seconds they took; a rank's speed is the median rate of its last `window`
    /// reports, and its capacity that speed in units of the slowest rank's (equal speeds until
    /// every rank has reported once).
    ///
    /// [`Balancer::record`]: crate::Balancer::record
    Measured {
        /// Reports the median is taken over.
        window: usize,
    },
    /// This rank's own capacity (`own:2.5`), positive and finite: every rank gives its own,
    /// and the call gathers them (as Zoltan takes each part's own size). The ranks' values
    /// differ; they agree on `own`.
    Own(f64),
}

impl Speeds {
    /// The window of `measured` when none is given.
    pub const DEFAULT_WINDOW: usize = 5;

    /// Measured speeds over the default window.
    pub const MEASURED: Speeds = Speeds::Measured {
        window: Self::DEFAULT_WINDOW,
    };

    /// Checks the values: a window of at least one report, capacities positive and finite.
    ///
    /// # Errors
    /// What is wrong, in words.
    pub fn check(&self) -> Result<(), String> {
        match self {
            Speeds::Measured { window: 0 } => {
                Err("the measuring window must hold at least one report".into())
            }
            Speeds::Own(c) if !(c.is_finite() && *c > 0.0) => Err(format!(
                "this rank's capacity ({c}) must be positive and finite"
            )),
            Speeds::Fixed(c) => match c.iter().position(|x| !(x.is_finite() && *x > 0.0)) {
                Some(i) => Err(format!(
                    "capacity {} ({}) must be positive and finite",
                    i + 1,
                    c[i]
                )),
                None if c.is_empty() => Err("fixed speeds need one capacity per rank".into()),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }
}

impl FromStr for Speeds {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        let value = value.trim();
        let speeds = match value.split_once(':') {
            None if value == "equal" => Speeds::Equal,
            None if value == "measured" => Speeds::MEASURED,
            Some(("measured", w)) => match w.trim().parse::<usize>() {
                Ok(window) => Speeds::Measured { window },
                Err(_) => return Err(format!("window '{w}' is not a whole number")),
            },
            Some(("own", c)) => Speeds::Own(
                c.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("own capacity '{c}' is not a number"))?,
            ),
            Some(("fixed", list)) => Speeds::Fixed(
                list.split(',')
                    .map(|x| x.trim().parse::<f64>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| {
                        "fixed speeds are positive numbers separated by commas".to_string()
                    })?,
            ),
            _ => {
                return Err(format!(
                    "'{value}' is not a source of speeds (expected equal, measured, \
                     measured:WINDOW, fixed:C0,C1,... or own:C)"
                ));
            }
        };
        speeds.check()?;
        Ok(speeds)
    }
}

impl fmt::Display for Speeds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Speeds::Equal => f.write_str("equal"),
            Speeds::Measured { window } => write!(f, "measured:{window}"),
            Speeds::Own(c) => write!(f, "own:{c}"),
            Speeds::Fixed(c) => {
                f.write_str("fixed:")?;
                write_list(f, c)
            }
        }
    }
}

/// Writes `values` separated by commas.
fn write_list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, values: &[T]) -> fmt::Result {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{v}")?;
    }
    Ok(())
}

/// How long a rank waits for a peer that has not reached the call before it names it.
///
/// Its text form: `timeout` (as long as the call's timeout, the default), seconds, or `none`.
///
/// ```
/// use hetlb_peer::options::EntryTimeout;
/// use std::time::Duration;
/// let ten = Duration::from_secs(10);
/// assert_eq!("timeout".parse::<EntryTimeout>().unwrap().limit(ten), Some(ten));
/// assert_eq!("2.5".parse::<EntryTimeout>().unwrap().limit(ten), Some(Duration::from_secs_f64(2.5)));
/// assert_eq!("none".parse::<EntryTimeout>().unwrap().limit(ten), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EntryTimeout {
    /// As long as the call's timeout.
    #[default]
    Timeout,
    /// This long.
    After(Duration),
    /// No limit: a peer that never reaches the call is waited for for ever.
    Never,
}

impl EntryTimeout {
    /// The limit under a call timeout of `timeout` (`None`: no limit).
    pub fn limit(self, timeout: Duration) -> Option<Duration> {
        match self {
            EntryTimeout::Timeout => Some(timeout),
            EntryTimeout::After(d) => Some(d),
            EntryTimeout::Never => None,
        }
    }
}

impl From<Option<Duration>> for EntryTimeout {
    /// `Some(d)`: after `d`; `None`: no limit.
    fn from(d: Option<Duration>) -> Self {
        d.map_or(EntryTimeout::Never, EntryTimeout::After)
    }
}

impl From<Duration> for EntryTimeout {
    fn from(d: Duration) -> Self {
        EntryTimeout::After(d)
    }
}

impl FromStr for EntryTimeout {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        match value.trim() {
            "timeout" => Ok(EntryTimeout::Timeout),
            "none" => Ok(EntryTimeout::Never),
            v => parse_seconds(v).map(EntryTimeout::After),
        }
    }
}

impl fmt::Display for EntryTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntryTimeout::Timeout => f.write_str("timeout"),
            EntryTimeout::After(d) => write!(f, "{}", d.as_secs_f64()),
            EntryTimeout::Never => f.write_str("none"),
        }
    }
}

/// Seconds as every face writes them: a number, positive, at most [`MAX_SECONDS`].
///
/// # Errors
/// What is wrong, in words.
pub fn parse_seconds(value: &str) -> Result<Duration, String> {
    let s: f64 = value
        .trim()
        .parse()
        .map_err(|_| format!("'{value}' is not a number of seconds"))?;
    check_seconds(s)?;
    Ok(Duration::from_secs_f64(s))
}

/// Checks seconds: positive, finite, at most [`MAX_SECONDS`].
///
/// # Errors
/// What is wrong, in words.
pub fn check_seconds(s: f64) -> Result<(), String> {
    if s.is_finite() && s > 0.0 && s <= MAX_SECONDS {
        Ok(())
    } else {
        Err(format!(
            "{s} is not positive seconds of at most {MAX_SECONDS:e}"
        ))
    }
}

/// A move's cost as every face writes it: `ALPHA,BETA`, seconds per message and per unit
/// of load, finite and not negative.
///
/// # Errors
/// What is wrong, in words.
///
/// ```
/// use hetlb_peer::options::parse_move_cost;
/// let m = parse_move_cost("1e-4, 1e-7").unwrap();
/// assert_eq!((m.seconds_per_message, m.seconds_per_byte), (1e-4, 1e-7));
/// assert!(parse_move_cost("1").is_err());
/// assert!(parse_move_cost("-1,0").is_err());
/// ```
pub fn parse_move_cost(value: &str) -> Result<CostModel, String> {
    let parts: Vec<f64> = value
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| expected_alpha_beta(value))?;
    let [alpha, beta] = parts[..] else {
        return Err(expected_alpha_beta(value));
    };
    let model = CostModel {
        seconds_per_message: alpha,
        seconds_per_byte: beta,
    };
    model.validate().map_err(|e| e.to_string())?;
    Ok(model)
}

fn expected_alpha_beta(value: &str) -> String {
    format!("'{value}' is not ALPHA,BETA (seconds per message and per unit of load)")
}

/// The text of a move's cost: `ALPHA,BETA`.
pub fn move_cost_text(m: &CostModel) -> String {
    format!("{},{}", m.seconds_per_message, m.seconds_per_byte)
}

/// Rule names separated by commas (`cwa,dishet`), at least one.
///
/// # Errors
/// The first name that is not a rule, or an empty list.
pub fn parse_rules(value: &str) -> Result<Vec<Algorithm>, String> {
    let list = value
        .split(',')
        .map(|r| r.trim().parse::<Algorithm>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    if list.is_empty() {
        return Err("name at least one rule".into());
    }
    Ok(list)
}

/// A boolean as every face writes it: `true` or `false` (also `1`/`0`, `yes`/`no`, `on`/`off`).
///
/// # Errors
/// Anything else.
pub fn parse_bool(value: &str) -> Result<bool, String> {
    match value.trim() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        other => Err(format!("'{other}' is not true or false")),
    }
}

/// A whole number of at least `min`.
///
/// # Errors
/// Anything else, in words.
pub fn parse_whole<T>(value: &str, min: T) -> Result<T, String>
where
    T: FromStr + PartialOrd + fmt::Display + Copy,
{
    match value.trim().parse::<T>() {
        Ok(v) if v >= min => Ok(v),
        _ => Err(format!("'{value}' is not a whole number of at least {min}")),
    }
}
