//! Set metrics and the conventions for empty sets.
//!
//! Both presets agree on the arithmetic when gold and prediction are non-empty; they differ only
//! on what an empty side means. That difference is one value, [`EmptySetPolicy`], passed to the
//! one function that turns counts into ratios, rather than conditions spread through the engine.

/// What coverage, precision and F1 mean when gold or prediction is empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptySetPolicy {
    /// Gold empty: coverage and F1 undefined (`None`), precision 0 when something was predicted
    /// and undefined when nothing was. Prediction empty while gold is not: all three are 0.
    Strict,
    /// The published ContextBench evaluator: coverage 1.0 when the gold size is not positive,
    /// precision 1.0 when the predicted size is not positive.
    ContextBench,
}

/// Coverage (recall), precision and F1 of one prediction against one gold set, with the counts
/// that let micro averages be rebuilt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score {
    pub coverage: Option<f64>,
    pub precision: Option<f64>,
    pub f1: Option<f64>,
    pub intersection: i64,
    pub gold_size: i64,
    pub pred_size: i64,
}

/// F1 from coverage and precision; 0 when both are 0.
pub fn f1(coverage: f64, precision: f64) -> f64 {
    if coverage + precision > 0.0 {
        2.0 * coverage * precision / (coverage + precision)
    } else {
        0.0
    }
}

impl EmptySetPolicy {
    /// Coverage alone (the per-step curve needs nothing else).
    pub fn coverage(self, inter: i64, gold: i64) -> Option<f64> {
        match self {
            Self::Strict => (gold > 0).then(|| inter as f64 / gold as f64),
            Self::ContextBench => Some(if gold > 0 {
                inter as f64 / gold as f64
            } else {
                1.0
            }),
        }
    }

    pub fn score(self, inter: i64, gold: i64, pred: i64) -> Score {
        let (coverage, precision) = match self {
            Self::Strict => {
                let precision = if pred > 0 {
                    Some(inter as f64 / pred as f64)
                } else if gold > 0 {
                    Some(0.0)
                } else {
                    None
                };
                (self.coverage(inter, gold), precision)
            }
            Self::ContextBench => (
                self.coverage(inter, gold),
                Some(if pred > 0 {
                    inter as f64 / pred as f64
                } else {
                    1.0
                }),
            ),
        };
        let f1 = match (coverage, precision) {
            (Some(c), Some(p)) => Some(f1(c, p)),
            _ => None,
        };
        Score {
            coverage,
            precision,
            f1,
            intersection: inter,
            gold_size: gold,
            pred_size: pred,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_conventions() {
        let s = EmptySetPolicy::Strict;
        let x = s.score(2, 4, 8);
        assert_eq!((x.coverage, x.precision), (Some(0.5), Some(0.25)));
        assert!((x.f1.unwrap() - 1.0 / 3.0).abs() < 1e-15);
        let g0 = s.score(0, 0, 3);
        assert_eq!((g0.coverage, g0.precision, g0.f1), (None, Some(0.0), None));
        let both0 = s.score(0, 0, 0);
        assert_eq!(
            (both0.coverage, both0.precision, both0.f1),
            (None, None, None)
        );
        let p0 = s.score(0, 5, 0);
        assert_eq!(
            (p0.coverage, p0.precision, p0.f1),
            (Some(0.0), Some(0.0), Some(0.0))
        );
    }

    #[test]
    fn contextbench_conventions() {
        let c = EmptySetPolicy::ContextBench;
        let g0 = c.score(0, 0, 3);
        assert_eq!((g0.coverage, g0.precision), (Some(1.0), Some(0.0)));
        let p0 = c.score(0, 5, 0);
        assert_eq!((p0.coverage, p0.precision), (Some(0.0), Some(1.0)));
        let neg = c.score(0, 5, -2);
        assert_eq!(neg.precision, Some(1.0));
        assert_eq!(c.coverage(0, 0), Some(1.0));
    }
}
