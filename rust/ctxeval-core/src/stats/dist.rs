//! Distribution functions behind the p-values: the log-gamma function, the regularized
//! incomplete beta function, and from it Student's t tail of a correlation and the binomial
//! distribution function of McNemar's exact test.
//!
//! They are checked against `math.lgamma` and scipy (`scipy.special.betainc`,
//! `scipy.stats.binom.cdf`, `scipy.stats.pearsonr`) in the Python tests.

use std::f64::consts::PI;

const LANCZOS_G: f64 = 6.024_680_040_776_73;
// CPython's `m_lgamma` (Modules/mathmodule.c): Lanczos' approximation with these coefficients.
const LANCZOS_NUM: [f64; 13] = [
    23_531_376_880.410_76,
    42_919_803_642.649_1,
    35_711_959_237.355_67,
    17_921_034_426.037_21,
    6_039_542_586.352_028,
    1_439_720_407.311_721_6,
    248_874_557.862_054_17,
    31_426_415.585_400_194,
    2_876_370.628_935_372_5,
    186_056.265_395_223_48,
    8_071.672_002_365_816,
    210.824_277_751_579_36,
    2.506_628_274_631_000_2,
];
const LANCZOS_DEN: [f64; 13] = [
    0.0,
    39_916_800.0,
    120_543_840.0,
    150_917_976.0,
    105_258_076.0,
    45_995_730.0,
    13_339_535.0,
    2_637_558.0,
    357_423.0,
    32_670.0,
    1_925.0,
    66.0,
    1.0,
];

fn lanczos_sum(x: f64) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    if x < 5.0 {
        for i in (0..13).rev() {
            num = num * x + LANCZOS_NUM[i];
            den = den * x + LANCZOS_DEN[i];
        }
    } else {
        for i in 0..13 {
            num = num / x + LANCZOS_NUM[i];
            den = den / x + LANCZOS_DEN[i];
        }
    }
    num / den
}

/// ln |Γ(x)| for x > 0 (what the statistics need); `+inf` at 0 and for non-positive integers.
pub fn ln_gamma(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x.is_infinite() {
        return f64::INFINITY;
    }
    if x == x.floor() && x <= 2.0 {
        return if x <= 0.0 { f64::INFINITY } else { 0.0 };
    }
    let ax = x.abs();
    if ax < 1e-20 {
        return -ax.ln();
    }
    let mut r = lanczos_sum(ax).ln() - LANCZOS_G;
    r += (ax - 0.5) * ((ax + LANCZOS_G - 0.5).ln() - 1.0);
    if x < 0.0 {
        r = PI.ln() - (PI * ax).sin().abs().ln() - ax.ln() - r;
    }
    r
}

/// ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b).
pub fn ln_beta(a: f64, b: f64) -> f64 {
    ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)
}

/// Continued fraction of the incomplete beta function (modified Lentz), valid for
/// x < (a + 1) / (a + b + 2).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-16;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..100_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b) for a, b > 0 and x in [0, 1].
pub fn betainc(a: f64, b: f64, x: f64) -> f64 {
    if x.is_nan() || a.is_nan() || b.is_nan() || a <= 0.0 || b <= 0.0 {
        return f64::NAN;
    }
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = a * x.ln() + b * (-x).ln_1p() - ln_beta(a, b);
    if x < (a + 1.0) / (a + b + 2.0) {
        (ln_front.exp() * beta_cf(a, b, x) / a).clamp(0.0, 1.0)
    } else {
        (1.0 - ln_front.exp() * beta_cf(b, a, 1.0 - x) / b).clamp(0.0, 1.0)
    }
}

/// Two-sided p-value of a correlation `r` over `n` pairs under independence: Student's t with
/// n − 2 degrees of freedom, t = r √((n − 2) / (1 − r²)), which is I_{1−r²}((n − 2)/2, 1/2)
/// (scipy's `pearsonr` and `spearmanr`). None below three pairs; 0 when |r| = 1.
pub fn correlation_p(r: f64, n: usize) -> Option<f64> {
    if n < 3 || r.is_nan() {
        return None;
    }
    let r = r.clamp(-1.0, 1.0);
    let df = (n - 2) as f64;
    let x = (1.0 - r) * (1.0 + r);
    Some(if x <= 0.0 {
        0.0
    } else {
        betainc(df / 2.0, 0.5, x)
    })
}

/// P(X ≤ k) for X ~ Binomial(n, p): I_{1−p}(n − k, k + 1), 1 for k ≥ n.
pub fn binom_cdf(k: u64, n: u64, p: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    betainc((n - k) as f64, (k + 1) as f64, 1.0 - p)
}

/// Largest n for which [`binom_cdf_half`] sums binomial coefficients exactly (Σ C(n, i) ≤ 2^n
/// stays below 2^127).
pub const EXACT_HALF_N: u64 = 126;

/// P(X ≤ k) for X ~ Binomial(n, ½): for n ≤ [`EXACT_HALF_N`], Σ_{i≤k} C(n, i) / 2^n from the
/// exact integer sum (one rounding), else [`binom_cdf`].
pub fn binom_cdf_half(k: u64, n: u64) -> f64 {
    if k >= n {
        return 1.0;
    }
    if n > EXACT_HALF_N {
        return binom_cdf(k, n, 0.5);
    }
    // Pascal's row n by additions only: every entry and the partial sum fit in a u128.
    let mut row = vec![0u128; n as usize + 1];
    row[0] = 1;
    for m in 1..=n as usize {
        for i in (1..=m).rev() {
            row[i] += row[i - 1];
        }
    }
    let total: u128 = row[..=k as usize].iter().sum();
    total as f64 * 2f64.powi(-(n as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn lgamma_known_values() {
        // math.lgamma
        assert!(close(ln_gamma(0.5), 0.572_364_942_924_700_4, 1e-15));
        assert!(close(ln_gamma(10.0), 12.801_827_480_081_467, 1e-15));
        assert!(close(ln_gamma(2500.5), 17_061.033_949_007_27, 1e-14));
        assert_eq!(ln_gamma(1.0), 0.0);
        assert_eq!(ln_gamma(2.0), 0.0);
        assert_eq!(ln_gamma(0.0), f64::INFINITY);
    }

    #[test]
    fn betainc_known_values() {
        // scipy.special.betainc
        assert!(close(
            betainc(2.5, 0.5, 0.3),
            0.018_927_124_071_945_658,
            1e-13
        ));
        assert!(close(betainc(1.0, 1.0, 0.25), 0.25, 1e-15));
        // I_x(a, 1) = x^a
        assert!(close(betainc(3.0, 1.0, 0.5), 0.125, 1e-14));
        assert_eq!(betainc(2.0, 3.0, 0.0), 0.0);
        assert_eq!(betainc(2.0, 3.0, 1.0), 1.0);
        assert!(betainc(0.0, 1.0, 0.5).is_nan());
    }

    #[test]
    fn binomial_and_correlation_tails() {
        // P(X <= 3; 12, 0.5) = (1 + 12 + 66 + 220) / 4096 = 299 / 4096
        assert!(close(binom_cdf(3, 12, 0.5), 299.0 / 4096.0, 1e-13));
        assert_eq!(binom_cdf(5, 5, 0.5), 1.0);
        assert_eq!(binom_cdf_half(3, 12), 299.0 / 4096.0);
        assert_eq!(binom_cdf_half(0, 1), 0.5);
        assert_eq!(binom_cdf_half(7, 7), 1.0);
        // the exact sum and the incomplete beta function agree where both apply
        for (k, n) in [(40, 100), (3, 126), (60, 126)] {
            assert!(close(binom_cdf_half(k, n), binom_cdf(k, n, 0.5), 1e-12));
        }
        assert_eq!(binom_cdf_half(300, 1000), binom_cdf(300, 1000, 0.5));
        assert_eq!(correlation_p(1.0, 10), Some(0.0));
        assert_eq!(correlation_p(0.5, 2), None);
        assert!(close(correlation_p(0.0, 10).unwrap(), 1.0, 1e-15));
        // n = 4 (df 2): p = 1 - |r| exactly (the beta(1/2... ) case: I_{1-r^2}(1, 1/2) = 1 - r)
        assert!(close(correlation_p(0.6, 4).unwrap(), 0.4, 1e-13));
    }
}
