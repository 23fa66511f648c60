//! Ranked-retrieval metrics: a ranked prediction of items (files, modules, functions) scored
//! against the gold items, as the localisation papers score it.
//!
//! Two sets of rules:
//!
//! - [`RankRules::Strict`], the IR literature's definitions: the prediction counts each item
//!   once (its first position), gold is a set. With `P` the distinct predictions, `G` the gold
//!   set and `h(k) = |P[..k] ∩ G|`:
//!   `acc@k = [G ⊆ P[..k]]`, `recall@k = h(k) / |G|`, `precision@k = h(k) / k`,
//!   `ndcg@k = Σ_{i<k, P[i]∈G} 1/log2(i+2) / Σ_{i<min(k,|G|)} 1/log2(i+2)`,
//!   `map@k = Σ_{i<k, P[i]∈G} h(i+1)/(i+1) / min(k, |G|)`, `mrr = 1 / rank of the first hit`
//!   (0 when nothing is hit). Everything is undefined (`None`) when `G` is empty.
//! - [`RankRules::LocAgent`], LocAgent's `evaluation/eval_metric.py` number for number: the
//!   prediction is the list as given, cut at the largest k asked (`max_k`), a position is a hit
//!   when its item is in the gold list (so a repeated hit counts again); the gold list counts
//!   its length, repeats included, cut at `max_k`: with `g = min(|gold|, max_k)`,
//!   `acc@k = [h(k) == min(|gold|, k)]` (the gold list is cut at k, and repeats in the
//!   prediction can make up for a missed item), `recall@k = h(k) / g` (so it depends on
//!   `max_k`, and repeats can lift it above 1), `precision@k = h(k) / k`,
//!   `ndcg@k = DCG(hits[..k]) / DCG(g ones then zeros, cut at k)`,
//!   `map@k = Σ_{i<k, hit} h(i+1)/(i+1) / k`. LocAgent has no MRR; under these rules it is
//!   1 / the position of the first hit in the list as given (not cut). An instance with an
//!   empty gold list is skipped by LocAgent: every value is `None`.
//!
//! Items are dense integer ids chosen by the caller (ctxeval interns `path:Name` strings per
//! instance); the arithmetic never looks at names.

use crate::engine::{LineView, ViewSet};
use crate::intervals::FileMap;
use crate::lineindex::LineIndex;

/// Which definitions of the ranked metrics to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankRules {
    /// The IR literature's definitions (distinct predictions, gold a set).
    Strict,
    /// LocAgent's `eval_metric.py`, quirks included.
    LocAgent,
}

/// The metrics at one cut-off `k`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtK {
    pub k: u32,
    pub acc: Option<f64>,
    pub recall: Option<f64>,
    pub precision: Option<f64>,
    pub ndcg: Option<f64>,
    pub map: Option<f64>,
}

/// The ranked metrics of one prediction against one gold set.
#[derive(Clone, Debug, PartialEq)]
pub struct RankScores {
    /// One entry per k asked, in the order asked.
    pub at: Vec<AtK>,
    pub mrr: Option<f64>,
    /// 1-based rank of the first hit (`None`: no hit).
    pub first_hit: Option<u32>,
    /// Gold items as the rules count them (distinct under strict, the list's length under
    /// LocAgent).
    pub gold_size: i64,
    /// Predictions as the rules count them (distinct under strict, the list's length under
    /// LocAgent).
    pub pred_size: i64,
}

/// 1/log2(i + 2): the discount of the 0-based position `i`.
fn discount(i: usize) -> f64 {
    1.0 / ((i + 2) as f64).log2()
}

/// The items of `v` in order, each once (its first position).
pub fn distinct(v: &[u32]) -> Vec<u32> {
    let mut seen = std::collections::HashSet::with_capacity(v.len());
    v.iter().copied().filter(|x| seen.insert(*x)).collect()
}

/// The owners of a file's definitions, given as byte spans (`functions[i]`: whether
/// definition `i` is of a function kind): per definition, the outermost definition holding
/// it (itself when none does), whose name is its module item, and the outermost function
/// among those holding it and itself (`None` when there is none), whose name is its
/// function item. A span holds another when it starts no later and ends no earlier; of equal
/// spans the first given holds the others.
pub fn definition_owners(
    spans: &[(u64, u64)],
    functions: &[bool],
) -> (Vec<usize>, Vec<Option<usize>>) {
    let n = spans.len();
    let mut order: Vec<usize> = (0..n).collect();
    // stable: of equal spans the first given comes first, and so holds the others
    order.sort_by_key(|&i| (spans[i].0, std::cmp::Reverse(spans[i].1)));
    let mut module = vec![0; n];
    let mut function = vec![None; n];
    // the definitions holding the current one, outermost first, each with its outermost
    // function
    let mut stack: Vec<(usize, Option<usize>)> = Vec::new();
    for &i in &order {
        let (start, end) = spans[i];
        while let Some(&(top, _)) = stack.last() {
            if spans[top].0 <= start && end <= spans[top].1 {
                break;
            }
            stack.pop();
        }
        let mut outer_fn = stack.last().and_then(|&(_, f)| f);
        if outer_fn.is_none() && functions.get(i).copied().unwrap_or(false) {
            outer_fn = Some(i);
        }
        module[i] = stack.first().map_or(i, |&(top, _)| top);
        function[i] = outer_fn;
        stack.push((i, outer_fn));
    }
    (module, function)
}

/// Ranked metrics of `pred` (in rank order) against `gold`, at each `k` of `ks`.
///
/// A `k` of 0 has every metric `None` (nothing is ranked within it).
pub fn rank_scores(pred: &[u32], gold: &[u32], ks: &[u32], rules: RankRules) -> RankScores {
    match rules {
        RankRules::Strict => strict(pred, gold, ks),
        RankRules::LocAgent => locagent(pred, gold, ks),
    }
}

fn undefined(ks: &[u32], gold_size: i64, pred_size: i64) -> RankScores {
    RankScores {
        at: ks
            .iter()
            .map(|&k| AtK {
                k,
                acc: None,
                recall: None,
                precision: None,
                ndcg: None,
                map: None,
            })
            .collect(),
        mrr: None,
        first_hit: None,
        gold_size,
        pred_size,
    }
}

fn strict(pred: &[u32], gold: &[u32], ks: &[u32]) -> RankScores {
    let p = distinct(pred);
    let g: std::collections::HashSet<u32> = gold.iter().copied().collect();
    let (gn, pn) = (g.len() as i64, p.len() as i64);
    if g.is_empty() {
        return undefined(ks, gn, pn);
    }
    let hit: Vec<bool> = p.iter().map(|x| g.contains(x)).collect();
    let first_hit = hit.iter().position(|&h| h).map(|i| i as u32 + 1);
    let at = ks
        .iter()
        .map(|&k| {
            if k == 0 {
                return undefined(&[0], gn, pn).at[0];
            }
            let k_us = k as usize;
            let mut hits = 0usize;
            let (mut dcg, mut ap) = (0.0, 0.0);
            for (i, &h) in hit.iter().take(k_us).enumerate() {
                if h {
                    hits += 1;
                    dcg += discount(i);
                    ap += hits as f64 / (i + 1) as f64;
                }
            }
            let ideal = k_us.min(g.len());
            let idcg: f64 = (0..ideal).map(discount).sum();
            AtK {
                k,
                acc: Some(if hits == g.len() { 1.0 } else { 0.0 }),
                recall: Some(hits as f64 / g.len() as f64),
                precision: Some(hits as f64 / k as f64),
                ndcg: Some(dcg / idcg),
                map: Some(ap / ideal as f64),
            }
        })
        .collect();
    RankScores {
        at,
        mrr: Some(first_hit.map_or(0.0, |r| 1.0 / f64::from(r))),
        first_hit,
        gold_size: gn,
        pred_size: pn,
    }
}

fn locagent(pred: &[u32], gold: &[u32], ks: &[u32]) -> RankScores {
    let (gn, pn) = (gold.len() as i64, pred.len() as i64);
    if gold.is_empty() {
        return undefined(ks, gn, pn);
    }
    let max_k = ks.iter().copied().max().unwrap_or(0) as usize;
    let hit: Vec<bool> = pred.iter().map(|x| gold.contains(x)).collect();
    let first_hit = hit.iter().position(|&h| h).map(|i| i as u32 + 1);
    // The gold labels: min(|gold|, max_k) ones.
    let g = gold.len().min(max_k);
    let at = ks
        .iter()
        .map(|&k| {
            if k == 0 {
                return undefined(&[0], gn, pn).at[0];
            }
            let k_us = k as usize;
            let mut hits = 0usize;
            let (mut dcg, mut ap) = (0.0, 0.0);
            for (i, &h) in hit.iter().take(k_us.min(max_k)).enumerate() {
                if h {
                    hits += 1;
                    dcg += discount(i);
                    ap += hits as f64 / (i + 1) as f64;
                }
            }
            let ideal = g.min(k_us);
            let idcg: f64 = (0..ideal).map(discount).sum();
            AtK {
                k,
                acc: Some(if hits == gold.len().min(k_us) {
                    1.0
                } else {
                    0.0
                }),
                recall: Some(if g > 0 { hits as f64 / g as f64 } else { 0.0 }),
                precision: Some(hits as f64 / k as f64),
                ndcg: Some(if idcg > 0.0 { dcg / idcg } else { 0.0 }),
                map: Some(ap / k as f64),
            }
        })
        .collect();
    RankScores {
        at,
        mrr: Some(first_hit.map_or(0.0, |r| 1.0 / f64::from(r))),
        first_hit,
        gold_size: gn,
        pred_size: pn,
    }
}

/// No item: the value of a file or definition that maps to no item at a level.
pub const NO_ITEM: u32 = u32::MAX;

/// One level (file, module or function) of an instance's ranking input.
#[derive(Clone, Debug, Default)]
pub struct RankLevel {
    /// The gold items (repeats kept: LocAgent's rules count them).
    pub gold: Vec<u32>,
    /// A declared ranking (items in rank order, repeats as given); `None`: the order in which
    /// the steps first showed each item.
    pub pred: Option<Vec<u32>>,
    /// The item of each file id ([`NO_ITEM`]: none); empty when files map to no item.
    pub file_items: Vec<u32>,
    /// The item of each definition, per file id, in the file's symbol order ([`NO_ITEM`]:
    /// none); empty when definitions map to no item.
    pub symbol_items: Vec<Vec<u32>>,
}

/// What an instance's ranking is computed from.
#[derive(Clone, Debug)]
pub struct RankingInput {
    pub ks: Vec<u32>,
    pub rules: RankRules,
    pub levels: Vec<RankLevel>,
    /// Lines of the budgeted recall (`None`: not computed).
    pub budget: Option<u64>,
    /// The ranked line ranges of a declared ranking; `None`: the steps' line views, in order.
    pub budget_lines: Option<Vec<LineView>>,
}

/// The ranked metrics of one level, and when the steps first showed one of its gold items.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelResult {
    pub scores: RankScores,
    /// 1-based step at which a gold item of the level was first shown (`None`: never, or no
    /// steps).
    pub first_gold_step: Option<u32>,
    /// Whether the scores are of a declared ranking (else of the steps' first-seen order).
    pub declared: bool,
}

/// The share of gold within the first `lines` distinct lines shown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BudgetResult {
    pub lines: u64,
    /// Distinct lines shown in all (at most `lines`): less when the run showed fewer.
    pub used: u64,
    /// Gold lines among the budget's lines / gold lines (`None`: no gold line).
    pub line_recall: Option<f64>,
    /// Gold files with a line among the budget's / gold files with a gold line (`None`: none).
    pub file_recall: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RankingResult {
    pub levels: Vec<LevelResult>,
    pub budget: Option<BudgetResult>,
}

/// The first-seen order of each level's items over the steps, and the budget's lines.
pub(crate) struct Ranker<'a> {
    input: &'a RankingInput,
    files: &'a [crate::engine::FileInfo],
    /// Per level: the item of each global symbol id (flattened from `symbol_items`).
    symbol_items: Vec<Vec<u32>>,
    /// The file of each global symbol id.
    symbol_file: Vec<u32>,
    seen_files: Vec<bool>,
    seen_symbols: Vec<bool>,
    /// Per level: items in first-seen order, with the 1-based step that showed each.
    order: Vec<Vec<(u32, u32)>>,
    seen_items: Vec<std::collections::HashSet<u32>>,
    budget_left: u64,
    budget_seen: FileMap<u32>,
}

impl<'a> Ranker<'a> {
    /// `sym_offset[f]`: the global id of file `f`'s first definition.
    pub(crate) fn new(
        input: &'a RankingInput,
        files: &'a [crate::engine::FileInfo],
        sym_offset: &[u32],
    ) -> Self {
        let n_symbols: usize = files.iter().map(|f| f.symbols.len()).sum();
        let mut symbol_file = Vec::with_capacity(n_symbols);
        for (f, info) in files.iter().enumerate() {
            symbol_file.extend(std::iter::repeat_n(f as u32, info.symbols.len()));
        }
        let symbol_items = input
            .levels
            .iter()
            .map(|lvl| {
                if lvl.symbol_items.is_empty() {
                    return Vec::new();
                }
                let mut flat = vec![NO_ITEM; n_symbols];
                for (f, items) in lvl.symbol_items.iter().enumerate() {
                    let (Some(info), Some(&base)) = (files.get(f), sym_offset.get(f)) else {
                        continue;
                    };
                    for (k, &item) in items.iter().take(info.symbols.len()).enumerate() {
                        flat[base as usize + k] = item;
                    }
                }
                flat
            })
            .collect();
        Self {
            input,
            files,
            symbol_items,
            symbol_file,
            seen_files: vec![false; files.len()],
            seen_symbols: vec![false; n_symbols],
            order: vec![Vec::new(); input.levels.len()],
            seen_items: vec![Default::default(); input.levels.len()],
            budget_left: input.budget.unwrap_or(0),
            budget_seen: FileMap::with_files(files.len()),
        }
    }

    fn push(&mut self, level: usize, item: u32, step: u32) {
        if item != NO_ITEM && self.seen_items[level].insert(item) {
            self.order[level].push((item, step));
        }
    }

    /// One step: `vs` as given (the order of its views) and what the engine credited it with
    /// (`files`, `symbols`: its resolution, sorted and distinct).
    pub(crate) fn step(&mut self, step: u32, vs: &ViewSet, files: &[u32], symbols: &[u32]) {
        // A step shows its files in the order its views name them. Most steps name a few
        // files (searched in a list); a search over a whole tree may name thousands (a map).
        let views = vs
            .lines
            .iter()
            .map(|lv| lv.file)
            .chain(vs.files.iter().copied())
            .chain(vs.symbols.iter().map(|&(f, _)| f));
        let mut named: Vec<u32> = Vec::new();
        let mut index: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
        for f in views {
            if named.len() < 32 {
                if !named.contains(&f) {
                    named.push(f);
                }
            } else {
                if index.is_empty() {
                    index.extend(named.iter().enumerate().map(|(i, &g)| (g, i)));
                }
                let n = index.len();
                index.entry(f).or_insert(n);
            }
        }
        let rank_of = |f: u32| {
            if index.is_empty() {
                named.iter().position(|&x| x == f).unwrap_or(usize::MAX)
            } else {
                index.get(&f).copied().unwrap_or(usize::MAX)
            }
        };
        let mut new_files: Vec<u32> = files
            .iter()
            .copied()
            .filter(|&f| (f as usize) < self.seen_files.len() && !self.seen_files[f as usize])
            .collect();
        new_files.sort_by_key(|&f| (rank_of(f), f));
        for &f in &new_files {
            self.seen_files[f as usize] = true;
        }
        // Definitions: in the order of their files in the step, then in file order.
        let mut new_symbols: Vec<u32> = symbols
            .iter()
            .copied()
            .filter(|&s| (s as usize) < self.seen_symbols.len() && !self.seen_symbols[s as usize])
            .collect();
        for &s in &new_symbols {
            self.seen_symbols[s as usize] = true;
        }
        new_symbols.sort_by_key(|&s| (rank_of(self.symbol_file[s as usize]), s));
        for level in 0..self.input.levels.len() {
            if !self.input.levels[level].file_items.is_empty() {
                for &f in &new_files {
                    let item = self.input.levels[level]
                        .file_items
                        .get(f as usize)
                        .copied()
                        .unwrap_or(NO_ITEM);
                    self.push(level, item, step);
                }
            }
            if !self.symbol_items[level].is_empty() {
                for &s in &new_symbols {
                    let item = self.symbol_items[level][s as usize];
                    self.push(level, item, step);
                }
            }
        }
        if self.input.budget.is_some() && self.input.budget_lines.is_none() {
            for lv in &vs.lines {
                self.spend(lv);
            }
        }
    }

    /// Take the lines of `lv` not taken yet, in file order, while the budget lasts.
    fn spend(&mut self, lv: &LineView) {
        if self.budget_left == 0 {
            return;
        }
        let Some((a, b)) = self.index(lv.file).and_then(|ix| ix.clip(lv.start, lv.end)) else {
            return;
        };
        let mut view = crate::intervals::LineRanges::new();
        view.insert_inclusive(a, b);
        let fresh = match self.budget_seen.get(lv.file) {
            Some(seen) => view.difference(seen),
            None => view,
        };
        for &(x, y) in fresh.spans() {
            if self.budget_left == 0 {
                break;
            }
            let take = u64::from(y - x).min(self.budget_left);
            self.budget_seen.insert(lv.file, x, x + take as u32);
            self.budget_left -= take;
        }
    }

    fn index(&self, file: u32) -> Option<&LineIndex> {
        self.files
            .get(file as usize)
            .and_then(|f| f.index.as_deref())
    }

    /// The scores of each level and the budgeted recall. `gold_lines`: the instance's gold
    /// lines, clipped (for the budget).
    pub(crate) fn finish(mut self, gold_lines: &FileMap<u32>) -> RankingResult {
        let input = self.input;
        if let (Some(_), Some(lines)) = (input.budget, &input.budget_lines) {
            for lv in lines {
                self.spend(lv);
            }
        }
        let levels = input
            .levels
            .iter()
            .enumerate()
            .map(|(level, lvl)| {
                let order = &self.order[level];
                let first_gold_step = order
                    .iter()
                    .find(|(item, _)| lvl.gold.contains(item))
                    .map(|&(_, step)| step);
                let derived: Vec<u32>;
                let pred: &[u32] = match &lvl.pred {
                    Some(p) => p,
                    None => {
                        derived = order.iter().map(|&(item, _)| item).collect();
                        &derived
                    }
                };
                LevelResult {
                    scores: rank_scores(pred, &lvl.gold, &input.ks, input.rules),
                    first_gold_step,
                    declared: lvl.pred.is_some(),
                }
            })
            .collect();
        let budget = input.budget.map(|lines| {
            let gold_size = gold_lines.measure();
            let gold_files: Vec<u32> = gold_lines.files().map(|(f, _)| f).collect();
            let hit_files = gold_files
                .iter()
                .filter(|&&f| self.budget_seen.get(f).is_some_and(|r| !r.is_empty()))
                .count();
            BudgetResult {
                lines,
                used: self.budget_seen.measure(),
                line_recall: (gold_size > 0).then(|| {
                    self.budget_seen.intersection_measure(gold_lines) as f64 / gold_size as f64
                }),
                file_recall: (!gold_files.is_empty())
                    .then(|| hit_files as f64 / gold_files.len() as f64),
            }
        });
        RankingResult { levels, budget }
    }
}

/// The lines of a view set clipped to their files, as ctxeval's strict reading takes them
/// (the budgeted recall's gold, whatever the preset).
pub(crate) fn clean_lines(files: &[crate::engine::FileInfo], vs: &ViewSet) -> FileMap<u32> {
    let mut out = FileMap::with_files(files.len());
    for lv in &vs.lines {
        let ix = files.get(lv.file as usize).and_then(|f| f.index.as_deref());
        if let Some((a, b)) = ix.and_then(|ix| ix.clip(lv.start, lv.end)) {
            out.entry(lv.file).insert_inclusive(a, b);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_by_hand() {
        // class A (0..100) { def f (10..50) { def g (20..30) } ; x (60..70) } ; def h (100..120);
        // a duplicate of g; a variable y (130..140) at top level
        let spans = [
            (0, 100),
            (10, 50),
            (20, 30),
            (60, 70),
            (100, 120),
            (20, 30),
            (130, 140),
        ];
        let functions = [false, true, true, false, true, true, false];
        let (module, function) = definition_owners(&spans, &functions);
        assert_eq!(module, vec![0, 0, 0, 0, 4, 0, 6]);
        assert_eq!(
            function,
            vec![None, Some(1), Some(1), None, Some(4), Some(1), None]
        );
        // given in another order: the same owners, by position
        let (m, f) = definition_owners(&[(20, 30), (0, 100), (10, 50)], &[true, false, true]);
        assert_eq!((m, f), (vec![1, 1, 1], vec![Some(2), None, Some(2)]));
        // equal spans: the first given holds the second
        let (m, f) = definition_owners(&[(5, 9), (5, 9)], &[false, true]);
        assert_eq!((m, f), (vec![0, 0], vec![None, Some(1)]));
        assert_eq!(definition_owners(&[], &[]), (vec![], vec![]));
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn strict_by_hand() {
        // gold {1, 2}; ranked 5, 1, 1, 7, 2: distinct 5, 1, 7, 2
        let s = rank_scores(&[5, 1, 1, 7, 2], &[1, 2], &[1, 3, 5], RankRules::Strict);
        assert_eq!((s.gold_size, s.pred_size, s.first_hit), (2, 4, Some(2)));
        assert!(close(s.mrr, 0.5));
        let [a1, a3, a5] = [s.at[0], s.at[1], s.at[2]];
        assert_eq!((a1.acc, a3.acc, a5.acc), (Some(0.0), Some(0.0), Some(1.0)));
        assert!(close(a3.recall, 0.5) && close(a5.recall, 1.0));
        assert!(close(a3.precision, 1.0 / 3.0) && close(a5.precision, 2.0 / 5.0));
        // ndcg@5: hits at positions 2 and 4 -> (1/log2 3 + 1/log2 5) / (1 + 1/log2 3)
        let want = (1.0 / 3f64.log2() + 1.0 / 5f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert!(close(a5.ndcg, want));
        // map@5: (1/2 + 2/4) / min(5, 2)
        assert!(close(a5.map, 0.5));
        assert!(close(a1.ndcg, 0.0) && close(a1.map, 0.0));
    }

    #[test]
    fn strict_empty_sides() {
        let s = rank_scores(&[1, 2], &[], &[1, 5], RankRules::Strict);
        assert!(s.mrr.is_none() && s.at.iter().all(|a| a.acc.is_none() && a.ndcg.is_none()));
        let e = rank_scores(&[], &[3], &[1, 5], RankRules::Strict);
        assert_eq!(e.mrr, Some(0.0));
        assert!(e
            .at
            .iter()
            .all(|a| a.acc == Some(0.0) && a.precision == Some(0.0)));
    }

    #[test]
    fn locagent_quirks() {
        // gold [a, b] (ids 1, 2); prediction a, a: LocAgent counts the hit twice, so Acc@2
        // holds though b was never predicted, and recall@2 is 1.
        let s = rank_scores(&[1, 1], &[1, 2], &[1, 2], RankRules::LocAgent);
        assert_eq!(s.at[1].acc, Some(1.0));
        assert!(close(s.at[1].recall, 1.0));
        // gold longer than k: Acc@1 only asks for one hit.
        let t = rank_scores(&[2, 9], &[1, 2, 3], &[1, 2], RankRules::LocAgent);
        assert_eq!((t.at[0].acc, t.at[1].acc), (Some(1.0), Some(0.0)));
        // recall divides by min(|gold|, max_k); MAP divides by k
        assert!(close(t.at[0].recall, 1.0 / 2.0));
        assert!(close(t.at[1].map, 1.0 / 2.0));
        let strict = rank_scores(&[2, 9], &[1, 2, 3], &[1, 2], RankRules::Strict);
        assert_eq!(strict.at[0].acc, Some(0.0));
        assert!(close(strict.at[0].recall, 1.0 / 3.0) && close(strict.at[1].map, 1.0 / 2.0));
        // a repeated hit lifts recall past 1
        let r = rank_scores(&[1, 1, 1], &[1], &[3], RankRules::LocAgent);
        assert!(close(r.at[0].recall, 3.0) && r.at[0].acc == Some(0.0));
        // gold repeats count: a gold list [m, m] is never fully found by one m
        let d = rank_scores(&[4], &[4, 4], &[1, 5], RankRules::LocAgent);
        assert_eq!((d.at[0].acc, d.at[1].acc), (Some(1.0), Some(0.0)));
    }

    #[test]
    fn a_step_naming_many_files_ranks_them_in_view_order() {
        use crate::engine::FileInfo;
        use std::sync::Arc;
        let n = 70u32;
        let files: Vec<FileInfo> = (0..n)
            .map(|_| FileInfo {
                index: Some(Arc::new(LineIndex::new(b"x\n"))),
                symbols: Vec::new(),
            })
            .collect();
        // views name the files in a scrambled order, some twice
        let order: Vec<u32> = (0..n).map(|i| (i * 37 + 11) % n).collect();
        let mut lines: Vec<LineView> = order
            .iter()
            .map(|&file| LineView {
                file,
                start: 1,
                end: Some(1),
            })
            .collect();
        lines.push(lines[3]);
        let vs = ViewSet {
            lines,
            ..Default::default()
        };
        let input = RankingInput {
            ks: vec![1],
            rules: RankRules::Strict,
            levels: vec![RankLevel {
                gold: vec![order[40]],
                pred: None,
                file_items: (0..n).collect(),
                symbol_items: Vec::new(),
            }],
            budget: None,
            budget_lines: None,
        };
        let offsets = vec![0u32; files.len() + 1];
        let mut r = Ranker::new(&input, &files, &offsets);
        let credited: Vec<u32> = (0..n).collect();
        r.step(1, &vs, &credited, &[]);
        assert_eq!(
            r.order[0].iter().map(|&(i, _)| i).collect::<Vec<_>>(),
            order
        );
        let res = r.finish(&FileMap::new());
        assert_eq!(res.levels[0].scores.first_hit, Some(41));
    }

    #[test]
    fn zero_k_is_undefined() {
        let s = rank_scores(&[1], &[1], &[0, 1], RankRules::Strict);
        assert!(s.at[0].acc.is_none() && s.at[1].acc == Some(1.0));
    }
}
