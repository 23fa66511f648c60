//! Paired comparisons of two runs on the same instances: McNemar's exact test of two
//! resolution rates, and Cohen's d of the paired differences.

use super::dist::binom_cdf_half;
use super::resample::TIE_TOL;
use super::sum::fsum;

/// McNemar's exact test: two-sided p-value that the discordant pairs split evenly, given
/// `b` instances only the first run resolved and `c` only the second: 2·P(X ≤ min(b, c)) for
/// X ~ Binomial(b + c, ½), capped at 1 (statsmodels' `mcnemar(..., exact=True)`); exact (one
/// rounding) up to 126 discordant pairs. No discordant pair gives 1.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    (2.0 * binom_cdf_half(b.min(c), n)).min(1.0)
}

/// Why Cohen's d is undefined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoEffectSize {
    /// Fewer than two differences: no standard deviation.
    TooFew,
    /// Every difference is the same, up to rounding: the standard deviation is at most
    /// [`TIE_TOL`] times the mean |difference| (0 but for rounding, so d_z would be noise).
    Constant,
}

/// Cohen's d of paired differences (d_z): mean(d) / sd(d), the standard deviation with n − 1
/// (so d_z · √n is the paired t statistic).
///
/// Undefined below two differences, and when their spread is negligible against their
/// magnitude: sd(d) ≤ [`TIE_TOL`] · mean(|d|), the randomization test's relative tolerance.
/// Differences that are all the same in exact arithmetic (a constant offset, each computed as
/// a − b) differ by rounding, which leaves an sd of ~1e-17 and a d_z of ~1e15 that means
/// nothing; any real spread is far above the tolerance.
pub fn cohens_dz(d: &[f64]) -> Result<f64, NoEffectSize> {
    let n = d.len();
    if n < 2 {
        return Err(NoEffectSize::TooFew);
    }
    if d.iter().all(|&x| x == d[0]) {
        return Err(NoEffectSize::Constant);
    }
    // d_z does not change with the scale: divide by the largest |d| so that the squares
    // neither underflow nor overflow
    let top = d.iter().fold(0.0f64, |a, b| a.max(b.abs()));
    let scaled: Vec<f64> = d.iter().map(|x| x / top).collect();
    let m = fsum(scaled.iter().copied()) / n as f64;
    let var = fsum(scaled.iter().map(|x| (x - m) * (x - m))) / (n - 1) as f64;
    let magnitude = fsum(scaled.iter().map(|x| x.abs())) / n as f64;
    let sd = var.sqrt();
    if sd <= TIE_TOL * magnitude {
        return Err(NoEffectSize::Constant);
    }
    Ok(m / sd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_by_hand() {
        // b = 3, c = 9: 2 · P(X <= 3; 12, ½) = 2 · 299 / 4096
        assert_eq!(mcnemar_exact(3, 9), 598.0 / 4096.0);
        assert_eq!(mcnemar_exact(9, 3), mcnemar_exact(3, 9));
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        assert_eq!(mcnemar_exact(4, 4), 1.0);
        // b = 0, c = 5: 2 / 32
        assert!((mcnemar_exact(0, 5) - 0.0625).abs() < 1e-15);
    }

    #[test]
    fn dz_by_hand() {
        // d = (1, 2, 3): mean 2, sd 1 -> 2
        assert!((cohens_dz(&[1.0, 2.0, 3.0]).unwrap() - 2.0).abs() < 1e-15);
        assert_eq!(cohens_dz(&[0.5]), Err(NoEffectSize::TooFew));
        assert_eq!(cohens_dz(&[0.5, 0.5]), Err(NoEffectSize::Constant));
        // the scale does not matter, tiny or huge
        let tiny = cohens_dz(&[1e-300, 2e-300, 3e-300]).unwrap();
        assert!((tiny - 2.0).abs() < 1e-12);
        let huge = cohens_dz(&[1e300, 2e300, 3e300]).unwrap();
        assert!((huge - 2.0).abs() < 1e-12);
    }

    #[test]
    fn dz_of_a_constant_offset_up_to_rounding_is_undefined() {
        // b = a + 0.05 on 10 rows, the differences computed as b - a: equal in exact
        // arithmetic, a few ulps apart in floating point (an sd of ~1e-17, d_z of ~1e15)
        let a: Vec<f64> = (0..10).map(|k| 0.08 * k as f64 + 0.01).collect();
        let d: Vec<f64> = a.iter().map(|&x| (x + 0.05) - x).collect();
        assert!(d.iter().any(|&x| x != d[0]), "the rounding this test needs");
        assert_eq!(cohens_dz(&d), Err(NoEffectSize::Constant));
        // the same for the 9.0e15 case: 0.1 apart, but for one ulp
        let e = [0.1, 0.1, 0.1 + f64::EPSILON / 8.0, 0.1];
        assert!(e.iter().any(|&x| x != e[0]));
        assert_eq!(cohens_dz(&e), Err(NoEffectSize::Constant));
        // a negative offset too, and at any scale
        let neg: Vec<f64> = d.iter().map(|x| -x * 1e-200).collect();
        assert_eq!(cohens_dz(&neg), Err(NoEffectSize::Constant));
    }

    #[test]
    fn dz_of_a_small_real_spread_is_defined() {
        // a spread of 1e-6 relative to the mean is far above the 1e-9 tolerance
        let d = [1.0, 1.0 + 1e-6, 1.0 - 1e-6, 1.0];
        let got = cohens_dz(&d).unwrap();
        let sd = (2e-12f64 / 3.0).sqrt();
        assert!((got - 1.0 / sd).abs() / got < 1e-6);
        // differences around 0 (mean 0, |d| not small against the spread): d_z = 0
        assert_eq!(cohens_dz(&[1e-12, -1e-12]), Ok(0.0));
    }
}
