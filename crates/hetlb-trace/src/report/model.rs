//! What the page draws: plain data, serialised into the page.

use serde::Serialize;

/// A line of points `[x, y]`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Line {
    /// Its legend.
    pub label: String,
    /// Its points.
    pub points: Vec<[f64; 2]>,
}

/// Every band of ranks' load over time on one grid: per band, mean, min and max at each `x`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Bands {
    /// Each band's name (`rank 3`, or `ranks 0–15`).
    pub labels: Vec<String>,
    /// The grid.
    pub x: Vec<f64>,
    /// Per band, the mean at each grid point (`None`: no sample yet).
    pub mean: Vec<Vec<Option<f64>>>,
    /// Per band, the minimum.
    pub min: Vec<Vec<Option<f64>>>,
    /// Per band, the maximum.
    pub max: Vec<Vec<Option<f64>>>,
}

/// A heat map: rows × columns of values.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Heat {
    /// What the values are.
    pub title: String,
    /// Row names (ranks or bands).
    pub rows: Vec<String>,
    /// Column names (steps or times).
    pub cols: Vec<String>,
    /// Values, row by row (`None`: nothing there).
    pub values: Vec<Vec<Option<f64>>>,
}

/// Units moved from each band (row) to each band (column).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Matrix {
    /// Band names.
    pub labels: Vec<String>,
    /// Units, row = sender, column = receiver.
    pub units: Vec<Vec<f64>>,
    /// Bytes in all.
    pub bytes: f64,
    /// Transfers in all.
    pub transfers: u64,
}

/// One decision of the trigger.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Decision {
    /// When (the chart's x unit).
    pub x: f64,
    /// The predicted gain over the trigger's horizon, seconds.
    pub gain: Option<f64>,
    /// The move's predicted cost × the margin, seconds.
    pub cost: Option<f64>,
    /// Held back by the trigger.
    pub held: bool,
}

/// A scenario's simulated and measured figures per node.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Scenario {
    /// Node names.
    pub nodes: Vec<String>,
    /// Simulated finishing times.
    pub simulated: Vec<f64>,
    /// Measured finishing times.
    pub measured: Vec<f64>,
}

/// Everything the page shows; `None` or empty parts are left out, with a note.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct Model {
    /// The page's title.
    pub title: String,
    /// `trace`, `run` or `scenario`.
    pub kind: String,
    /// Key figures, as rows of two cells.
    pub summary: Vec<[String; 2]>,
    /// The x axis of the time charts (`seconds`, `iteration` …).
    pub x_label: String,
    /// Imbalance (max ÷ mean) over time, one line per run.
    pub imbalance: Vec<Line>,
    /// Load over time per band of ranks.
    pub load: Option<Bands>,
    /// The rank × step heat map.
    pub heat: Option<Heat>,
    /// The share of time each rank spent computing, rank × time.
    pub utilisation: Option<Heat>,
    /// Migrations, rank × rank.
    pub migrations: Option<Matrix>,
    /// The trigger's decisions.
    pub decisions: Vec<Decision>,
    /// Seconds per iteration, one line per balancer.
    pub iteration_seconds: Vec<Line>,
    /// A scenario's simulated against measured figures.
    pub scenario: Option<Scenario>,
    /// What the page could not show, and why.
    pub notes: Vec<String>,
}
