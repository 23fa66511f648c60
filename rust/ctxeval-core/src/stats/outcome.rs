//! Context and outcome: how one metric of a run relates to whether its instances were
//! resolved. One call gives every statistic of the outcome view for one (run, metric):
//! counts, resolution rate, the means of each class, AUROC with its bootstrap interval, the
//! point-biserial correlation with its p-value, and the resolution rate per quantile bin.

use rayon::prelude::*;

use super::corr::{pearson, Undefined};
use super::rank::{auroc, cmp};
use super::resample::auroc_bootstrap_ci;
use super::sum::fsum;

/// Below this many instances no association statistic is given.
pub const MIN_N: usize = 5;

/// Why the association statistics of an outcome are null.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    TooFew,
    AllResolved,
    NoneResolved,
    Constant,
}

impl Reason {
    /// The text written in reports and JSON.
    pub fn text(self) -> &'static str {
        match self {
            Reason::TooFew => "n < 5",
            Reason::AllResolved => "all resolved",
            Reason::NoneResolved => "none resolved",
            Reason::Constant => "constant metric",
        }
    }
}

/// One quantile bin: the instances whose mid-distribution value falls in it.
#[derive(Clone, Debug, PartialEq)]
pub struct Bin {
    /// 0-based bin number (empty bins are left out, so numbers may skip).
    pub index: usize,
    pub lo: f64,
    pub hi: f64,
    pub mean: f64,
    pub n: usize,
    pub n_pass: usize,
}

/// The statistics of one metric against resolution.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub n: usize,
    pub n_pass: usize,
    pub rate: Option<f64>,
    pub mean_pass: Option<f64>,
    pub mean_fail: Option<f64>,
    pub auroc: Option<f64>,
    pub auroc_ci: Option<(f64, f64)>,
    pub r: Option<f64>,
    pub r_p: Option<f64>,
    pub bins: Vec<Bin>,
    pub reason: Option<Reason>,
}

/// Settings shared by every metric of a view.
#[derive(Clone, Debug)]
pub struct OutcomeOptions {
    pub resamples: usize,
    pub level: f64,
    pub bins: usize,
    pub key: Vec<u32>,
}

/// Quantile bins that never split tied values: value v goes to bin ⌊B·F(v)⌋ (capped at B − 1),
/// where F(v) = (#below + ½ #equal) / n is the mid-distribution function. Empty bins are left
/// out. Computed in integers: ⌊B (2·below + equal) / 2n⌋.
pub fn quantile_bins(values: &[f64], labels: &[bool], bins: usize) -> Vec<Bin> {
    let n = values.len();
    if n == 0 || bins == 0 {
        return Vec::new();
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| cmp(&values[i], &values[j]));
    let mut out: Vec<Bin> = Vec::new();
    let mut members: Vec<f64> = Vec::new();
    let mut s = 0;
    while s < n {
        let mut e = s + 1;
        while e < n && values[order[e]] == values[order[s]] {
            e += 1;
        }
        let index = ((bins * (2 * s + (e - s))) / (2 * n)).min(bins - 1);
        let passed = order[s..e].iter().filter(|&&i| labels[i]).count();
        let v = values[order[s]];
        match out.last_mut() {
            Some(b) if b.index == index => {
                b.hi = v;
                b.n += e - s;
                b.n_pass += passed;
            }
            _ => {
                if let Some(b) = out.last_mut() {
                    b.mean = bin_mean(&mut members, b);
                }
                out.push(Bin {
                    index,
                    lo: v,
                    hi: v,
                    mean: 0.0,
                    n: e - s,
                    n_pass: passed,
                });
            }
        }
        members.extend(order[s..e].iter().map(|&i| values[i]));
        s = e;
    }
    if let Some(b) = out.last_mut() {
        b.mean = bin_mean(&mut members, b);
    }
    out
}

/// The mean of a bin's values, kept within [lo, hi] (the division can round a mean of equal
/// values one unit past them).
fn bin_mean(members: &mut Vec<f64>, b: &Bin) -> f64 {
    (fsum(members.drain(..)) / b.n as f64).clamp(b.lo, b.hi)
}

/// The outcome statistics of one metric: `values[i]` is instance i's value, `labels[i]`
/// whether it was resolved (instances without a value or without a status are left out by the
/// caller). Association statistics (AUROC and its interval, r and its p-value) are None, with
/// the reason, when n < 5, when every or no instance was resolved, or when the metric is
/// constant.
pub fn outcome(values: &[f64], labels: &[bool], opts: &OutcomeOptions) -> Outcome {
    assert_eq!(
        values.len(),
        labels.len(),
        "outcome: values and labels differ in length"
    );
    let n = values.len();
    let n_pass = labels.iter().filter(|&&l| l).count();
    let class_mean = |want: bool| {
        let v: Vec<f64> = values
            .iter()
            .zip(labels)
            .filter(|(_, &l)| l == want)
            .map(|(&v, _)| v)
            .collect();
        (!v.is_empty()).then(|| fsum(v.iter().copied()) / v.len() as f64)
    };
    let reason = if n < MIN_N {
        Some(Reason::TooFew)
    } else if n_pass == n {
        Some(Reason::AllResolved)
    } else if n_pass == 0 {
        Some(Reason::NoneResolved)
    } else if values.iter().all(|&v| v == values[0]) {
        Some(Reason::Constant)
    } else {
        None
    };
    let mut out = Outcome {
        n,
        n_pass,
        rate: (n > 0).then(|| n_pass as f64 / n as f64),
        mean_pass: class_mean(true),
        mean_fail: class_mean(false),
        auroc: None,
        auroc_ci: None,
        r: None,
        r_p: None,
        bins: quantile_bins(values, labels, opts.bins),
        reason,
    };
    if reason.is_none() {
        out.auroc = auroc(values, labels);
        out.auroc_ci = auroc_bootstrap_ci(values, labels, opts.level, opts.resamples, &opts.key);
        let y: Vec<f64> = labels.iter().map(|&l| if l { 1.0 } else { 0.0 }).collect();
        match pearson(values, &y) {
            Ok(c) => {
                out.r = Some(c.r);
                out.r_p = c.p;
            }
            Err(Undefined::Constant) | Err(Undefined::TooFew) => {}
        }
    }
    out
}

/// [`outcome`] of many metrics on threads; each metric draws its own stream from the same
/// seed, so the result does not depend on the number of threads or on the other metrics.
pub fn outcome_many(items: &[(Vec<f64>, Vec<bool>)], opts: &OutcomeOptions) -> Vec<Outcome> {
    items.par_iter().map(|(v, l)| outcome(v, l, opts)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> OutcomeOptions {
        OutcomeOptions {
            resamples: 200,
            level: 0.95,
            bins: 5,
            key: vec![0],
        }
    }

    #[test]
    fn bins_keep_ties_together() {
        // six of ten values are 1.0: F(1.0) = (4 + 3) / 10 = 0.7 -> bin 3; nothing in bin 4
        let v = [0.0, 0.1, 0.2, 0.3, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        let l = [
            false, false, true, false, true, true, false, true, true, true,
        ];
        let b = quantile_bins(&v, &l, 5);
        let got: Vec<(usize, usize, usize)> = b.iter().map(|b| (b.index, b.n, b.n_pass)).collect();
        // F: 0.05, 0.15, 0.25, 0.35 -> bins 0, 0, 1, 1
        assert_eq!(got, vec![(0, 2, 0), (1, 2, 1), (3, 6, 5)]);
        assert_eq!((b[2].lo, b[2].hi, b[2].mean), (1.0, 1.0, 1.0));
        assert_eq!((b[0].lo, b[0].hi), (0.0, 0.1));
        assert!((b[0].mean - 0.05).abs() < 1e-15);
        assert!(quantile_bins(&[], &[], 5).is_empty());
    }

    #[test]
    fn reasons() {
        let o = outcome(&[0.1, 0.2], &[true, false], &opts());
        assert_eq!(
            (o.reason, o.auroc, o.rate),
            (Some(Reason::TooFew), None, Some(0.5))
        );
        let o = outcome(&[0.1, 0.2, 0.3, 0.4, 0.5], &[true; 5], &opts());
        assert_eq!((o.reason, o.mean_fail), (Some(Reason::AllResolved), None));
        let o = outcome(&[0.1, 0.2, 0.3, 0.4, 0.5], &[false; 5], &opts());
        assert_eq!(o.reason, Some(Reason::NoneResolved));
        let o = outcome(&[0.3; 5], &[true, false, true, false, true], &opts());
        assert_eq!((o.reason, o.r), (Some(Reason::Constant), None));
        assert_eq!(Reason::Constant.text(), "constant metric");
    }

    #[test]
    fn separating_metric() {
        let v = [0.9, 0.8, 0.7, 0.2, 0.1, 0.0];
        let l = [true, true, true, false, false, false];
        let o = outcome(&v, &l, &opts());
        assert_eq!(o.reason, None);
        assert_eq!(o.auroc, Some(1.0));
        assert_eq!(o.auroc_ci, Some((1.0, 1.0)));
        assert!(o.r.unwrap() > 0.9 && o.r_p.unwrap() < 0.01);
        assert_eq!((o.n, o.n_pass, o.rate), (6, 3, Some(0.5)));
        let many = outcome_many(
            &[(v.to_vec(), l.to_vec()), (v.to_vec(), l.to_vec())],
            &opts(),
        );
        assert_eq!(many[0], o);
        assert_eq!(many[1], o);
    }
}
