//! Property tests of the ranked metrics: the laws of the IR definitions, and where LocAgent's
//! rules must agree with them.

use ctxeval_core::ranking::{distinct, rank_scores, RankRules};
use proptest::prelude::*;

fn ids() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(0u32..10, 0..14)
}

fn ks() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::btree_set(1u32..12, 1..4).prop_map(|s| s.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(800))]

    #[test]
    fn strict_values_are_ratios_and_grow_with_k(pred in ids(), gold in ids(), ks in ks()) {
        let s = rank_scores(&pred, &gold, &ks, RankRules::Strict);
        if gold.is_empty() {
            prop_assert!(s.mrr.is_none());
            prop_assert!(s.at.iter().all(|a| a.acc.is_none() && a.recall.is_none()));
            return Ok(());
        }
        for a in &s.at {
            for v in [a.acc, a.recall, a.precision, a.ndcg, a.map] {
                let v = v.unwrap();
                prop_assert!((0.0..=1.0 + 1e-12).contains(&v));
            }
            prop_assert_eq!(a.acc == Some(1.0), (a.recall.unwrap() - 1.0).abs() < 1e-12);
        }
        for w in s.at.windows(2) {
            prop_assert!(w[0].acc <= w[1].acc && w[0].recall <= w[1].recall);
        }
        let hit = s.first_hit.map_or(0.0, |r| 1.0 / f64::from(r));
        prop_assert_eq!(s.mrr, Some(hit));
    }

    #[test]
    fn strict_counts_each_prediction_once(pred in ids(), gold in ids(), ks in ks()) {
        let mut doubled = pred.clone();
        doubled.extend(pred.iter().rev());
        let a = rank_scores(&pred, &gold, &ks, RankRules::Strict);
        let b = rank_scores(&doubled, &gold, &ks, RankRules::Strict);
        prop_assert_eq!(a.at, b.at);
        prop_assert_eq!(a.mrr, b.mrr);
        let c = rank_scores(&distinct(&pred), &gold, &ks, RankRules::Strict);
        prop_assert_eq!(c.at, rank_scores(&pred, &gold, &ks, RankRules::Strict).at);
    }

    #[test]
    fn locagent_agrees_without_repeats_where_gold_fits(
        pred in ids(), gold in prop::collection::btree_set(0u32..10, 1..5), ks in ks()
    ) {
        let pred = distinct(&pred);
        let gold: Vec<u32> = gold.into_iter().collect();
        let s = rank_scores(&pred, &gold, &ks, RankRules::Strict);
        let l = rank_scores(&pred, &gold, &ks, RankRules::LocAgent);
        let max_k = *ks.iter().max().unwrap() as usize;
        for (a, b) in s.at.iter().zip(&l.at) {
            prop_assert_eq!(a.precision, b.precision);
            if gold.len() <= a.k as usize {
                prop_assert_eq!(a.acc, b.acc);
                prop_assert!((a.ndcg.unwrap() - b.ndcg.unwrap()).abs() < 1e-12);
            }
            if gold.len() <= max_k {
                prop_assert!((a.recall.unwrap() - b.recall.unwrap()).abs() < 1e-12);
            }
        }
        prop_assert_eq!(s.mrr, l.mrr);
    }
}
