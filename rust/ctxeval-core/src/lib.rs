//! ctxeval-core: the arithmetic of ctxeval, in plain Rust.
//!
//! - [`intervals`]: normalised sets of half-open ranges over lines and bytes, per-file maps;
//! - [`lineindex`]: line ↔ byte mapping of a file's exact bytes;
//! - [`metrics`]: coverage, precision and F1 with an explicit empty-set policy;
//! - [`engine`]: one instance's final-context, per-step and EditLoc metrics, and a parallel batch;
//! - [`linediff`]: line diffs of two file versions as tree-sitter edits, and which definitions
//!   of the old version carry over to the new one (incremental re-parsing);
//! - [`definitions`]: definitions found by tree-sitter queries, named, re-used across versions
//!   by incremental re-parsing, extracted on many threads;
//! - [`ranking`]: ranked-retrieval metrics (Acc@k, Recall@k, Precision@k, nDCG@k, MAP@k, MRR)
//!   under ctxeval's rules and LocAgent's, over declared rankings or the order a trajectory
//!   first showed each item, and the budgeted recall of the first K lines shown;
//! - [`rawlines`]: the ContextBench reference's own line arithmetic, for its preset;
//! - [`stats`]: statistics of result rows (bootstrap intervals, AUROC, correlations, paired
//!   tests, effect sizes), deterministic given a seed.
//!
//! Nothing here knows about Python; the `ctxeval-py` crate is a thin binding layer.

pub mod definitions;
pub mod engine;
pub mod intervals;
pub mod linediff;
pub mod lineindex;
pub mod metrics;
pub mod ranking;
pub mod rawlines;
pub mod stats;

pub use engine::{
    evaluate, evaluate_batch, EditLocResult, EditSet, FileInfo, Instance, InstanceResult, LineView,
    PerGranularity, Preset, StepResult, TrajectoryResult, ViewSet,
};
pub use intervals::{ByteRanges, FileMap, LineRanges, RangeSet};
pub use lineindex::LineIndex;
pub use metrics::{EmptySetPolicy, Score};
pub use ranking::{RankLevel, RankRules, RankScores, RankingInput, RankingResult};

/// The crate version (also the Python package's version).
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
