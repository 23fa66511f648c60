//! Sums: the exactly rounded sum of `math.fsum`, and the plain left-to-right sum Python's
//! built-in `sum` of floats computes (before 3.12).
//!
//! Means, variances and test statistics use [`fsum`]: a mean of many similar values then does not
//! drift with their order. The bootstrap keeps the left-to-right [`naive_sum`] of its original
//! Python version, so that its resampled means, and so its intervals, are the same to the bit.

/// The correctly rounded sum of finite values (Shewchuk's algorithm with CPython's final
/// half-even correction, as `math.fsum`). Non-finite input gives the plain sum.
pub fn fsum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    let mut special = 0.0f64;
    for v in values {
        if !v.is_finite() {
            special += v;
            continue;
        }
        let mut x = v;
        let mut i = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        partials.truncate(i);
        if x != 0.0 {
            if !x.is_finite() {
                // intermediate overflow of finite values: nothing exact to give
                special += x;
                partials.clear();
            } else {
                partials.push(x);
            }
        }
    }
    if special != 0.0 || special.is_nan() {
        return special + partials.iter().sum::<f64>();
    }
    let mut n = partials.len();
    if n == 0 {
        return 0.0;
    }
    n -= 1;
    let mut hi = partials[n];
    let mut lo = 0.0;
    while n > 0 {
        let x = hi;
        n -= 1;
        let y = partials[n];
        hi = x + y;
        let yr = hi - x;
        lo = y - yr;
        if lo != 0.0 {
            break;
        }
    }
    if n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0)) {
        let y = lo * 2.0;
        let x = hi + y;
        let yr = x - hi;
        if y == yr {
            hi = x;
        }
    }
    hi
}

/// Left to right from 0.0: what `sum(list_of_floats)` computes in Python up to 3.11.
#[inline]
pub fn naive_sum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut s = 0.0;
    for v in values {
        s += v;
    }
    s
}

/// Mean by [`fsum`]; None for no value.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| fsum(values.iter().copied()) / values.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsum_is_exact() {
        assert_eq!(fsum([0.1; 10]), 1.0);
        assert_eq!(naive_sum([0.1; 10]), 0.999_999_999_999_999_9);
        assert_eq!(
            fsum([1e100, 1.0, -1e100, 1e-100, 1e50, -1.0, -1e50]),
            1e-100
        );
        // half-even across partials: math.fsum([1e-16, 1, 1e16]) == 1.0000000000000002e16
        assert_eq!(fsum([1e-16, 1.0, 1e16]), 1.000_000_000_000_000_2e16);
        assert_eq!(fsum([]), 0.0);
        assert_eq!(fsum([f64::INFINITY, 1.0]), f64::INFINITY);
        assert_eq!(mean(&[1.0, 2.0, 4.0]), Some(7.0 / 3.0));
        assert_eq!(mean(&[]), None);
    }
}
