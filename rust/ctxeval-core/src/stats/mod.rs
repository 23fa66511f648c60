//! Statistics of result rows: intervals, tests, correlations and effect sizes, deterministic
//! given a seed.
//!
//! - [`rng`]: the stream of Python's `random.Random(seed)`, draw for draw;
//! - [`sum`]: `math.fsum`'s exactly rounded sum, and the plain left-to-right sum;
//! - [`dist`]: log-gamma, the regularized incomplete beta function, the t tail of a
//!   correlation, the binomial distribution function;
//! - [`rank`]: mid-ranks, the Mann–Whitney count, AUROC, Cliff's delta (ties counted half);
//! - [`corr`]: Pearson (point-biserial) and Spearman correlations with p-values;
//! - [`resample`]: percentile bootstrap intervals of a mean and of AUROC, the paired sign-flip
//!   randomization test;
//! - [`paired`]: McNemar's exact test, Cohen's d of paired differences;
//! - [`outcome`]: every statistic of one metric against resolution, and quantile bins.
//!
//! The conventions (interval types, tie handling, when a statistic is undefined) are written in
//! `docs/statistics.md`; the Python layer (`ctxeval.analysis.stats`) documents its own view of
//! them.

pub mod corr;
pub mod dist;
pub mod outcome;
pub mod paired;
pub mod rank;
pub mod resample;
pub mod rng;
pub mod sum;
