//! Bindings of `ctxeval_core::stats` (names prefixed `stats_`). Values arrive as lists of
//! floats (undefined values already left out, except in the Spearman matrix, where None marks
//! them); seeds arrive as the key words `random.Random(seed)` seeds with
//! (`ctxeval.analysis.stats.seed_key`). Resampling runs with the GIL released.

use ctxeval_core::stats::{corr, dist, outcome, paired, rank, resample, rng, sum};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

fn check_level(level: f64) -> PyResult<()> {
    if level > 0.0 && level < 1.0 {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "confidence level must be between 0 and 1, got {level}"
        )))
    }
}

fn check_finite(values: &[f64], what: &str) -> PyResult<()> {
    match values.iter().find(|v| v.is_nan()) {
        Some(_) => Err(PyValueError::new_err(format!(
            "{what}: NaN is not a value (leave undefined values out)"
        ))),
        None => Ok(()),
    }
}

fn check_len(a: usize, b: usize, what: &str) -> PyResult<()> {
    if a == b {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{what} differ in length: {a} and {b}"
        )))
    }
}

fn check_labels(values: &[f64], labels: &[bool]) -> PyResult<()> {
    check_len(values.len(), labels.len(), "values and labels")
}

/// `math.fsum`: the correctly rounded sum.
#[pyfunction]
fn stats_fsum(values: Vec<f64>) -> f64 {
    sum::fsum(values)
}

/// ln |Γ(x)|.
#[pyfunction]
fn stats_ln_gamma(x: f64) -> f64 {
    dist::ln_gamma(x)
}

/// The regularized incomplete beta function I_x(a, b).
#[pyfunction]
fn stats_betainc(a: f64, b: f64, x: f64) -> f64 {
    dist::betainc(a, b, x)
}

/// P(X ≤ k) for X ~ Binomial(n, p).
#[pyfunction]
fn stats_binom_cdf(k: u64, n: u64, p: f64) -> f64 {
    dist::binom_cdf(k, n, p)
}

/// Two-sided p-value of a correlation r over n pairs (None below three).
#[pyfunction]
fn stats_correlation_p(r: f64, n: usize) -> Option<f64> {
    dist::correlation_p(r, n)
}

/// The first `count` values of `random.random()` on the generator seeded by `key`.
#[pyfunction]
fn stats_mt_random(key: Vec<u32>, count: usize) -> Vec<f64> {
    let mut g = rng::PyRandom::from_key(&key);
    (0..count).map(|_| g.random()).collect()
}

#[pyfunction]
fn stats_bootstrap_mean_ci(
    py: Python<'_>,
    values: Vec<f64>,
    level: f64,
    n: usize,
    key: Vec<u32>,
) -> PyResult<Option<(f64, f64)>> {
    check_level(level)?;
    check_finite(&values, "bootstrap")?;
    Ok(py.detach(move || resample::bootstrap_mean_ci(&values, level, n, &key)))
}

#[pyfunction]
fn stats_randomization_test(py: Python<'_>, d: Vec<f64>, n: usize, key: Vec<u32>) -> PyResult<f64> {
    check_finite(&d, "randomization test")?;
    Ok(py.detach(move || resample::randomization_test(&d, n, &key)))
}

#[pyfunction]
fn stats_auroc(values: Vec<f64>, labels: Vec<bool>) -> PyResult<Option<f64>> {
    check_labels(&values, &labels)?;
    check_finite(&values, "auroc")?;
    Ok(rank::auroc(&values, &labels))
}

#[pyfunction]
fn stats_auroc_ci(
    py: Python<'_>,
    values: Vec<f64>,
    labels: Vec<bool>,
    level: f64,
    n: usize,
    key: Vec<u32>,
) -> PyResult<Option<(f64, f64)>> {
    check_level(level)?;
    check_labels(&values, &labels)?;
    check_finite(&values, "auroc")?;
    Ok(py.detach(move || resample::auroc_bootstrap_ci(&values, &labels, level, n, &key)))
}

#[pyfunction]
fn stats_cliffs_delta(a: Vec<f64>, b: Vec<f64>) -> PyResult<Option<f64>> {
    check_finite(&a, "cliffs_delta")?;
    check_finite(&b, "cliffs_delta")?;
    Ok(rank::cliffs_delta(&a, &b))
}

#[pyfunction]
fn stats_mcnemar(b: u64, c: u64) -> f64 {
    paired::mcnemar_exact(b, c)
}

/// Cohen's d_z and, when it is undefined, why (`"n < 2"`, `"constant differences"`).
#[pyfunction]
fn stats_cohens_dz(d: Vec<f64>) -> PyResult<(Option<f64>, Option<&'static str>)> {
    check_finite(&d, "cohens_dz")?;
    Ok(match paired::cohens_dz(&d) {
        Ok(v) => (Some(v), None),
        Err(paired::NoEffectSize::TooFew) => (None, Some("n < 2")),
        Err(paired::NoEffectSize::Constant) => (None, Some("constant differences")),
    })
}

type CorrelationTuple = (Option<f64>, Option<f64>, usize, Option<String>);

/// (r, p, n, why undefined) with the outcome view's rule: fewer than `min_n` pairs is null.
fn corr_tuple(
    got: Result<corr::Correlation, corr::Undefined>,
    n: usize,
    min_n: usize,
) -> CorrelationTuple {
    let min_n = min_n.max(2);
    if n < min_n {
        return (None, None, n, Some(format!("n < {min_n}")));
    }
    match got {
        Ok(c) => (Some(c.r), c.p, n, None),
        Err(corr::Undefined::TooFew) => (None, None, n, Some("n < 2".to_owned())),
        Err(corr::Undefined::Constant) => (None, None, n, Some("constant metric".to_owned())),
    }
}

/// Pearson's r and its p-value, as (r, p, n, why undefined).
#[pyfunction]
fn stats_pearson(x: Vec<f64>, y: Vec<f64>) -> PyResult<CorrelationTuple> {
    check_len(x.len(), y.len(), "paired samples")?;
    check_finite(&x, "pearson")?;
    check_finite(&y, "pearson")?;
    Ok(corr_tuple(corr::pearson(&x, &y), x.len(), 2))
}

/// Spearman's ρ and its p-value, as (ρ, p, n, why undefined).
#[pyfunction]
fn stats_spearman(x: Vec<f64>, y: Vec<f64>) -> PyResult<CorrelationTuple> {
    check_len(x.len(), y.len(), "paired samples")?;
    check_finite(&x, "spearman")?;
    check_finite(&y, "spearman")?;
    Ok(corr_tuple(corr::spearman(&x, &y), x.len(), 2))
}

/// Spearman's ρ between every two columns over the rows where both are defined (None:
/// undefined), row-major; a cell with fewer than `min_n` pairs is null.
#[pyfunction]
#[pyo3(signature = (columns, min_n=5))]
fn stats_spearman_matrix(
    py: Python<'_>,
    columns: Vec<Vec<Option<f64>>>,
    min_n: usize,
) -> PyResult<Vec<CorrelationTuple>> {
    let cols: Vec<Vec<f64>> = columns
        .into_iter()
        .map(|c| c.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect())
        .collect();
    if let Some(first) = cols.first() {
        if cols.iter().any(|c| c.len() != first.len()) {
            return Err(PyValueError::new_err("columns differ in length"));
        }
    }
    let cells = py.detach(move || corr::spearman_matrix(&cols));
    Ok(cells
        .into_iter()
        .map(|(got, n)| corr_tuple(got, n, min_n))
        .collect())
}

/// Every statistic of the outcome view for many (values, labels) pairs (one per metric), on
/// threads, each with its own stream from `key`: a list of dicts.
#[pyfunction]
fn stats_outcome_many<'py>(
    py: Python<'py>,
    items: Vec<(Vec<f64>, Vec<bool>)>,
    resamples: usize,
    level: f64,
    bins: usize,
    key: Vec<u32>,
) -> PyResult<Bound<'py, PyList>> {
    check_level(level)?;
    for (v, l) in &items {
        check_labels(v, l)?;
        check_finite(v, "outcome")?;
    }
    let opts = outcome::OutcomeOptions {
        resamples,
        level,
        bins,
        key,
    };
    let results = py.detach(move || outcome::outcome_many(&items, &opts));
    let out = PyList::empty(py);
    for o in results {
        let d = PyDict::new(py);
        d.set_item("n", o.n)?;
        d.set_item("n_pass", o.n_pass)?;
        d.set_item("rate", o.rate)?;
        d.set_item("mean_pass", o.mean_pass)?;
        d.set_item("mean_fail", o.mean_fail)?;
        d.set_item("auroc", o.auroc)?;
        d.set_item("auroc_ci", o.auroc_ci)?;
        d.set_item("r", o.r)?;
        d.set_item("r_p", o.r_p)?;
        d.set_item("reason", o.reason.map(|r| r.text()))?;
        let bins = PyList::empty(py);
        for b in &o.bins {
            let bd = PyDict::new(py);
            bd.set_item("bin", b.index)?;
            bd.set_item("lo", b.lo)?;
            bd.set_item("hi", b.hi)?;
            bd.set_item("mean", b.mean)?;
            bd.set_item("n", b.n)?;
            bd.set_item("n_pass", b.n_pass)?;
            bd.set_item("rate", b.n_pass as f64 / b.n as f64)?;
            bins.append(bd)?;
        }
        d.set_item("bins", bins)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Adds the `stats_*` functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(stats_fsum, m)?)?;
    m.add_function(wrap_pyfunction!(stats_ln_gamma, m)?)?;
    m.add_function(wrap_pyfunction!(stats_betainc, m)?)?;
    m.add_function(wrap_pyfunction!(stats_binom_cdf, m)?)?;
    m.add_function(wrap_pyfunction!(stats_correlation_p, m)?)?;
    m.add_function(wrap_pyfunction!(stats_mt_random, m)?)?;
    m.add_function(wrap_pyfunction!(stats_bootstrap_mean_ci, m)?)?;
    m.add_function(wrap_pyfunction!(stats_randomization_test, m)?)?;
    m.add_function(wrap_pyfunction!(stats_auroc, m)?)?;
    m.add_function(wrap_pyfunction!(stats_auroc_ci, m)?)?;
    m.add_function(wrap_pyfunction!(stats_cliffs_delta, m)?)?;
    m.add_function(wrap_pyfunction!(stats_mcnemar, m)?)?;
    m.add_function(wrap_pyfunction!(stats_cohens_dz, m)?)?;
    m.add_function(wrap_pyfunction!(stats_pearson, m)?)?;
    m.add_function(wrap_pyfunction!(stats_spearman, m)?)?;
    m.add_function(wrap_pyfunction!(stats_spearman_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(stats_outcome_many, m)?)?;
    Ok(())
}
