//! Rank statistics: mid-ranks, the Mann–Whitney count behind AUROC, Cliff's delta.
//!
//! Ties are counted half everywhere: a resolved and an unresolved instance with the same value
//! add ½ to the Mann–Whitney count, tied values share the mean of the ranks they occupy. The
//! counts are kept as integers (twice the Mann–Whitney U), so that AUROC is one correctly
//! rounded division and does not depend on the order of the input.

use std::cmp::Ordering;

/// Total order on the values (no NaN reaches here: callers leave undefined values out).
#[inline]
pub(crate) fn cmp(a: &f64, b: &f64) -> Ordering {
    a.partial_cmp(b).unwrap_or_else(|| a.total_cmp(b))
}

/// Mid-ranks (1-based): tied values get the mean of the ranks they span.
pub fn midranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&i, &j| cmp(&values[i], &values[j]));
    let mut ranks = vec![0.0; values.len()];
    let mut s = 0;
    while s < order.len() {
        let mut e = s + 1;
        while e < order.len() && values[order[e]] == values[order[s]] {
            e += 1;
        }
        // ranks s+1 ..= e, mean (s + 1 + e) / 2 — a half-integer, exact in f64
        let r = (s + 1 + e) as f64 / 2.0;
        for &i in &order[s..e] {
            ranks[i] = r;
        }
        s = e;
    }
    ranks
}

/// Twice the Mann–Whitney U of sample `a` against sample `b`: Σ over pairs of 2 when a > b,
/// 1 when tied, 0 when a < b. Exact.
pub fn mann_whitney_2u(a: &[f64], b: &[f64]) -> u128 {
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&v| (v, true))
        .chain(b.iter().map(|&v| (v, false)))
        .collect();
    all.sort_by(|x, y| cmp(&x.0, &y.0));
    let (mut below_b, mut twice_u) = (0u128, 0u128);
    let mut s = 0;
    while s < all.len() {
        let mut e = s;
        let (mut na, mut nb) = (0u128, 0u128);
        while e < all.len() && all[e].0 == all[s].0 {
            if all[e].1 {
                na += 1;
            } else {
                nb += 1;
            }
            e += 1;
        }
        twice_u += na * (2 * below_b + nb);
        below_b += nb;
        s = e;
    }
    twice_u
}

/// AUROC of `values` against `labels` (true: resolved): the probability that a resolved
/// instance has the higher value, ties counted half (Mann–Whitney U / (n₁ n₀)). None unless
/// both classes are present.
pub fn auroc(values: &[f64], labels: &[bool]) -> Option<f64> {
    let (pos, neg) = split(values, labels);
    if pos.is_empty() || neg.is_empty() {
        return None;
    }
    let twice_u = mann_whitney_2u(&pos, &neg);
    Some(twice_u as f64 / (2 * pos.len() as u128 * neg.len() as u128) as f64)
}

/// Cliff's delta of `a` against `b`: (#{a > b} − #{a < b}) / (n_a n_b) over all cross pairs,
/// which is 2·AUROC − 1. None when a sample is empty.
pub fn cliffs_delta(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let pairs = a.len() as u128 * b.len() as u128;
    let twice_u = mann_whitney_2u(a, b) as i128;
    // #gt − #lt = 2U − n_a n_b  (2U = 2 #gt + #eq, n_a n_b = #gt + #eq + #lt)
    Some((twice_u - pairs as i128) as f64 / pairs as f64)
}

/// The values of the resolved (`true`) and unresolved instances, in input order.
pub fn split(values: &[f64], labels: &[bool]) -> (Vec<f64>, Vec<f64>) {
    let mut pos = Vec::new();
    let mut neg = Vec::new();
    for (&v, &l) in values.iter().zip(labels) {
        if l {
            pos.push(v);
        } else {
            neg.push(v);
        }
    }
    (pos, neg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn midranks_by_hand() {
        assert_eq!(
            midranks(&[3.0, 1.0, 3.0, 2.0, 3.0]),
            vec![4.0, 1.0, 4.0, 2.0, 4.0]
        );
        assert_eq!(midranks(&[0.5, 0.5]), vec![1.5, 1.5]);
        assert!(midranks(&[]).is_empty());
    }

    #[test]
    fn auroc_by_hand() {
        // resolved 0.9, 0.5; unresolved 0.5, 0.1: pairs (0.9>0.5) (0.9>0.1) (0.5=0.5) (0.5>0.1)
        // = 3.5 of 4
        let v = [0.9, 0.5, 0.5, 0.1];
        let l = [true, true, false, false];
        assert_eq!(auroc(&v, &l), Some(0.875));
        assert_eq!(auroc(&[1.0, 1.0], &[true, false]), Some(0.5));
        assert_eq!(auroc(&[1.0, 2.0], &[true, true]), None);
        assert_eq!(auroc(&[f64::INFINITY, 1.0], &[true, false]), Some(1.0));
    }

    #[test]
    fn cliffs_delta_by_hand() {
        // a = (1, 2, 3), b = (2, 2): gt: 3>2 x2 = 2; lt: 1<2 x2 = 2; eq 2 -> (2 - 2) / 6 = 0
        assert_eq!(cliffs_delta(&[1.0, 2.0, 3.0], &[2.0, 2.0]), Some(0.0));
        assert_eq!(cliffs_delta(&[3.0, 4.0], &[1.0, 2.0]), Some(1.0));
        assert_eq!(cliffs_delta(&[1.0], &[2.0, 3.0]), Some(-1.0));
        assert_eq!(cliffs_delta(&[], &[1.0]), None);
    }
}
