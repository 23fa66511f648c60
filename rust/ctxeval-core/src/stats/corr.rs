//! Correlations: Pearson's r (the point-biserial correlation when one side is 0/1) and
//! Spearman's ρ (Pearson's r of the mid-ranks), each with its two-sided p-value.

use super::dist::correlation_p;
use super::rank::midranks;
use super::sum::fsum;

/// Why a correlation is undefined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undefined {
    /// Fewer than three pairs: no degrees of freedom left for the test.
    TooFew,
    /// One side does not vary: r is 0/0.
    Constant,
}

/// A correlation and its p-value (None below three pairs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Correlation {
    pub r: f64,
    pub p: Option<f64>,
    pub n: usize,
}

fn constant(v: &[f64]) -> bool {
    v.iter().all(|&x| x == v[0])
}

/// Deviations from the mean divided by the largest of them: r does not change with the scale,
/// and in [−1, 1] neither the squares underflow (values near 1e-300) nor overflow (near 1e300).
/// A sample that is not constant has a non-zero largest deviation.
pub(crate) fn scaled_deviations(v: &[f64]) -> Vec<f64> {
    let m = fsum(v.iter().copied()) / v.len() as f64;
    let d: Vec<f64> = v.iter().map(|x| x - m).collect();
    let top = d.iter().fold(0.0f64, |a, b| a.max(b.abs()));
    if top > 0.0 && top.is_finite() {
        d.iter().map(|x| x / top).collect()
    } else {
        d
    }
}

/// Pearson's r over the pairs (x_i, y_i): Σ dx dy / √(Σ dx² Σ dy²) about the means (each side's
/// deviations scaled by their largest), every sum exactly rounded; clamped to [−1, 1]. Undefined below two pairs or when a side is constant
/// (tested exactly, not by a variance that rounding can leave non-zero).
pub fn pearson(x: &[f64], y: &[f64]) -> Result<Correlation, Undefined> {
    assert_eq!(x.len(), y.len(), "pearson: samples differ in length");
    let n = x.len();
    if n < 2 {
        return Err(Undefined::TooFew);
    }
    if constant(x) || constant(y) {
        return Err(Undefined::Constant);
    }
    let dx = scaled_deviations(x);
    let dy = scaled_deviations(y);
    let sxy = fsum(dx.iter().zip(&dy).map(|(a, b)| a * b));
    let sxx = fsum(dx.iter().map(|a| a * a));
    let syy = fsum(dy.iter().map(|b| b * b));
    let r = (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0);
    Ok(Correlation {
        r,
        p: correlation_p(r, n),
        n,
    })
}

/// Spearman's ρ: Pearson's r of the mid-ranks (ties share their mean rank), p-value from
/// Student's t with n − 2 degrees of freedom as scipy's `spearmanr`.
pub fn spearman(x: &[f64], y: &[f64]) -> Result<Correlation, Undefined> {
    assert_eq!(x.len(), y.len(), "spearman: samples differ in length");
    if x.len() < 2 {
        return Err(Undefined::TooFew);
    }
    pearson(&midranks(x), &midranks(y))
}

/// Spearman's ρ between every two columns over the rows where both are defined (NaN: not
/// defined), as a row-major matrix of `(ρ or why not, n)`; the diagonal is computed too.
pub fn spearman_matrix(columns: &[Vec<f64>]) -> Vec<(Result<Correlation, Undefined>, usize)> {
    let k = columns.len();
    let mut out = Vec::with_capacity(k * k);
    for a in columns {
        for b in columns {
            let (x, y): (Vec<f64>, Vec<f64>) = a
                .iter()
                .zip(b)
                .filter(|(u, v)| !u.is_nan() && !v.is_nan())
                .map(|(u, v)| (*u, *v))
                .unzip();
            let n = x.len();
            out.push((spearman(&x, &y), n));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pearson_by_hand() {
        // x = (1, 2, 3), y = (1, 3, 2): dx = (-1, 0, 1), dy = (-1, 1, 0); Σdxdy = 1,
        // Σdx² = 2, Σdy² = 2 -> r = 1/2
        let c = pearson(&[1.0, 2.0, 3.0], &[1.0, 3.0, 2.0]).unwrap();
        assert!((c.r - 0.5).abs() < 1e-15);
        // n = 3, df = 1: p = I_{3/4}(1/2, 1/2) = 2/π · asin(√(3/4)) = 2/3
        assert!((c.p.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            pearson(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]),
            Err(Undefined::Constant)
        );
        assert_eq!(pearson(&[1.0], &[2.0]), Err(Undefined::TooFew));
        // a constant column of 0.1s whose mean rounds away from 0.1 is still constant
        assert_eq!(
            pearson(&[0.1; 3], &[1.0, 2.0, 3.0]),
            Err(Undefined::Constant)
        );
        let perfect = pearson(&[1.0, 2.0, 3.0, 4.0], &[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert_eq!((perfect.r, perfect.p), (1.0, Some(0.0)));
    }

    #[test]
    fn spearman_ties() {
        // ranks x = (1.5, 1.5, 3), y = (1, 2, 3): Pearson of the ranks
        let c = spearman(&[5.0, 5.0, 7.0], &[1.0, 2.0, 3.0]).unwrap();
        let want = pearson(&[1.5, 1.5, 3.0], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(c, want);
        assert!((c.r - 0.866_025_403_784_438_6).abs() < 1e-15);
    }

    #[test]
    fn matrix_pairwise_complete() {
        let nan = f64::NAN;
        let cols = vec![vec![1.0, 2.0, 3.0, nan], vec![3.0, 2.0, 1.0, 0.0]];
        let m = spearman_matrix(&cols);
        assert_eq!(m.len(), 4);
        assert_eq!(m[1].1, 3);
        assert!((m[1].0.unwrap().r + 1.0).abs() < 1e-15);
        assert_eq!(m[3].1, 4);
    }
}
