//! Resampling: percentile bootstrap intervals (of a mean, of AUROC) and the paired sign-flip
//! randomization test, all on the stream of Python's `random.Random(seed)` ([`PyRandom`]).
//!
//! The draws are exactly those of the Python formulation each function documents, so a plain
//! Python loop over `random.Random(seed)` reproduces every resample (the tests do).

use super::rank::{cmp, split};
use super::rng::PyRandom;
use super::sum::fsum;

/// Type-7 quantile (linear interpolation between order statistics, NumPy's default) of a
/// sorted, non-empty slice.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// The central interval at `level` of resampled statistics (sorted here).
fn percentile_interval(mut stats: Vec<f64>, level: f64) -> (f64, f64) {
    stats.sort_by(cmp);
    let alpha = 1.0 - level;
    (
        quantile(&stats, alpha / 2.0),
        quantile(&stats, 1.0 - alpha / 2.0),
    )
}

/// Percentile bootstrap interval of the mean: `n` resamples of `values` with replacement, each
/// mean `sum(rng.choices(values, k=len(values))) / len(values)` (the sum left to right), the
/// interval their type-7 quantiles at (1 − level)/2 and (1 + level)/2. None for no value; a
/// constant sample gives its value exactly, without resampling.
pub fn bootstrap_mean_ci(values: &[f64], level: f64, n: usize, key: &[u32]) -> Option<(f64, f64)> {
    let first = *values.first()?;
    if values.iter().all(|&v| v == first) {
        return Some((first, first));
    }
    let mut rng = PyRandom::from_key(key);
    let k = values.len() as f64;
    let means: Vec<f64> = (0..n)
        .map(|_| {
            let mut s = 0.0;
            for _ in 0..values.len() {
                s += values[rng.index(k)];
            }
            s / k
        })
        .collect();
    Some(percentile_interval(means, level))
}

/// Stratified percentile bootstrap interval of AUROC: each resample draws the resolved values
/// with replacement (`rng.choices(pos, k=len(pos))`), then the unresolved ones
/// (`rng.choices(neg, k=len(neg))`), keeping both class sizes, and computes AUROC with ties
/// counted half. The mean of the resampled AUROCs is the estimate itself (each class is
/// resampled independently). None unless both classes are present.
pub fn auroc_bootstrap_ci(
    values: &[f64],
    labels: &[bool],
    level: f64,
    n: usize,
    key: &[u32],
) -> Option<(f64, f64)> {
    let (pos, neg) = split(values, labels);
    if pos.is_empty() || neg.is_empty() {
        return None;
    }
    // Each value as the index of its distinct value in sorted order: a resample is then two
    // count vectors and one sweep, with no sorting.
    let mut distinct: Vec<f64> = pos.iter().chain(&neg).copied().collect();
    distinct.sort_by(cmp);
    distinct.dedup_by(|a, b| a == b);
    let slot = |v: &f64| distinct.partition_point(|d| cmp(d, v).is_lt());
    let pos_at: Vec<usize> = pos.iter().map(slot).collect();
    let neg_at: Vec<usize> = neg.iter().map(slot).collect();
    let (n1, n0) = (pos.len(), neg.len());
    let (f1, f0) = (n1 as f64, n0 as f64);
    let denominator = (2 * n1 as u128 * n0 as u128) as f64;
    let mut cp = vec![0u64; distinct.len()];
    let mut cn = vec![0u64; distinct.len()];
    let mut rng = PyRandom::from_key(key);
    let stats: Vec<f64> = (0..n)
        .map(|_| {
            cp.fill(0);
            cn.fill(0);
            for _ in 0..n1 {
                cp[pos_at[rng.index(f1)]] += 1;
            }
            for _ in 0..n0 {
                cn[neg_at[rng.index(f0)]] += 1;
            }
            let (mut below, mut twice_u) = (0u128, 0u128);
            for (&p, &q) in cp.iter().zip(&cn) {
                twice_u += p as u128 * (2 * below + q as u128);
                below += q as u128;
            }
            twice_u as f64 / denominator
        })
        .collect();
    Some(percentile_interval(stats, level))
}

/// Relative tolerance (to Σ|d|) under which a sign-flipped sum counts as equal to the
/// observed one (so extreme): sums that differ only by rounding tie.
pub const TIE_TOL: f64 = 1e-9;

/// Two-sided p-value of mean(d) = 0 by random sign flips of the paired differences `d`.
///
/// The statistic is |Σ d|; a flipped sum within [`TIE_TOL`]·Σ|d| of the observed one counts as
/// extreme. When all 2^k sign vectors fit in `n` they are enumerated and the p-value is exact
/// (each flipped sum exactly rounded); otherwise `n` draws of `rng.getrandbits(k)` (bit k−1−i
/// flipping d_i, as Python's `format(bits, '0kb')` reads them) give (1 + #extreme) / (1 + n).
/// No difference, or an observed sum within the tolerance of 0, gives 1.
pub fn randomization_test(d: &[f64], n: usize, key: &[u32]) -> f64 {
    let k = d.len();
    if k == 0 {
        return 1.0;
    }
    let total = fsum(d.iter().copied());
    let observed = total.abs();
    let tol = TIE_TOL * fsum(d.iter().map(|x| x.abs()));
    if observed <= tol {
        return 1.0;
    }
    let threshold = observed - tol;
    if k < 63 && (1u64 << k) <= n as u64 {
        let vectors = 1u64 << k;
        let extreme = (0..vectors)
            .filter(|&mask| {
                let s = fsum(
                    d.iter()
                        .enumerate()
                        .map(|(i, &x)| if mask >> i & 1 == 1 { -x } else { x }),
                );
                s.abs() >= threshold
            })
            .count();
        return extreme as f64 / vectors as f64;
    }
    let mut rng = PyRandom::from_key(key);
    let mut words = Vec::with_capacity(k / 32 + 1);
    let mut extreme = 0u64;
    for _ in 0..n {
        rng.getrandbits(k as u32, &mut words);
        let mut s = 0.0;
        for (i, &x) in d.iter().enumerate() {
            let bit = k - 1 - i;
            if words[bit / 32] >> (bit % 32) & 1 == 1 {
                s += x;
            }
        }
        if (total - 2.0 * s).abs() >= threshold {
            extreme += 1;
        }
    }
    (1 + extreme) as f64 / (1 + n as u64) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_degenerate_and_two_point() {
        assert_eq!(bootstrap_mean_ci(&[], 0.95, 100, &[0]), None);
        assert_eq!(
            bootstrap_mean_ci(&[0.1; 7], 0.95, 100, &[0]),
            Some((0.1, 0.1))
        );
        // means of (0, 1) resampled: 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4
        assert_eq!(
            bootstrap_mean_ci(&[0.0, 1.0], 0.95, 10_000, &[0]),
            Some((0.0, 1.0))
        );
        assert_eq!(
            bootstrap_mean_ci(&[0.0, 1.0], 0.4, 10_000, &[0]),
            Some((0.5, 0.5))
        );
    }

    #[test]
    fn auroc_interval_holds_separation() {
        let v = [0.9, 0.8, 0.3, 0.1];
        let l = [true, true, false, false];
        assert_eq!(
            auroc_bootstrap_ci(&v, &l, 0.95, 500, &[0]),
            Some((1.0, 1.0))
        );
        assert_eq!(auroc_bootstrap_ci(&v, &[true; 4], 0.95, 500, &[0]), None);
        let v = [0.9, 0.2, 0.5, 0.5, 0.1, 0.7];
        let l = [true, true, true, false, false, false];
        let (lo, hi) = auroc_bootstrap_ci(&v, &l, 0.95, 2000, &[7]).unwrap();
        let est = super::super::rank::auroc(&v, &l).unwrap();
        assert!(lo <= est && est <= hi && (0.0..=1.0).contains(&lo) && hi <= 1.0);
    }

    #[test]
    fn randomization_exact_cases() {
        // d = (1, 2, 3): flipped sums 6, 0, 2, -4, 4, -2, 0, -6; |s| >= 6 twice of 8
        assert_eq!(randomization_test(&[1.0, 2.0, 3.0], 10_000, &[0]), 0.25);
        assert_eq!(randomization_test(&[1.0; 4], 10_000, &[0]), 0.125);
        assert_eq!(randomization_test(&[2.0, -1.0], 10_000, &[0]), 1.0);
        assert_eq!(randomization_test(&[], 10_000, &[0]), 1.0);
        assert_eq!(randomization_test(&[0.2, -0.2], 10_000, &[0]), 1.0);
    }

    #[test]
    fn randomization_monte_carlo_floor() {
        // 2^20 > n: Monte Carlo; equal differences are extreme only for the two constant sign
        // vectors, so the add-one estimate sits at its floor
        assert_eq!(randomization_test(&[1.0; 20], 1000, &[3]), 1.0 / 1001.0);
    }

    #[test]
    fn quantile_type7() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert_eq!(quantile(&[5.0], 0.3), 5.0);
    }
}
