//! The per-instance engine: from gold and the steps' views to every metric of one result row.
//!
//! The caller (ctxeval's Python layer) has already resolved paths to dense file ids, built a
//! [`LineIndex`] per file and extracted definitions; the engine does all the arithmetic: clipping,
//! line → byte conversion, definition overlap, final-context scores, the per-step coverage curve,
//! AUC-coverage, redundancy and EditLoc, for the four granularities at once.

use std::sync::Arc;

use crate::intervals::FileMap;
use crate::lineindex::LineIndex;
use crate::metrics::{EmptySetPolicy, Score};
use crate::ranking::{Ranker, RankingInput, RankingResult};
use crate::rawlines::{self, RawRanges};

/// Which evaluator's conventions to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// ctxeval's own: clipped, normalised ranges; undefined metrics are `None`.
    Strict,
    /// Number for number the published ContextBench evaluator, quirks included.
    ContextBench,
}

impl Preset {
    pub fn empty_sets(self) -> EmptySetPolicy {
        match self {
            Self::Strict => EmptySetPolicy::Strict,
            Self::ContextBench => EmptySetPolicy::ContextBench,
        }
    }
}

/// One file an instance refers to. `index` is `None` for a file that does not exist at the base
/// commit (it can still be named, e.g. as a file a patch creates or a missing gold file).
#[derive(Clone, Debug, Default)]
pub struct FileInfo {
    pub index: Option<Arc<LineIndex>>,
    /// Definitions of the file as half-open byte ranges, in the caller's order; a symbol's id is
    /// its position in the concatenation of all files' lists.
    pub symbols: Vec<(u64, u64)>,
}

/// Lines `start..=end` of a file as given (`end = None`: to the end of the file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineView {
    pub file: u32,
    pub start: i64,
    pub end: Option<i64>,
}

/// What one step (or the final context, or gold) shows.
#[derive(Clone, Debug, Default)]
pub struct ViewSet {
    pub lines: Vec<LineView>,
    /// Files credited at file level only (post-edit views; listed files without lines).
    pub files: Vec<u32>,
    /// Definitions shown by name: `(file, index in that file's symbols)`.
    pub symbols: Vec<(u32, u32)>,
    /// Take the symbols as given instead of adding every definition the lines overlap (the
    /// ContextBench reference does this for steps that name symbols).
    pub symbols_only: bool,
}

/// The locations a patch edits.
#[derive(Clone, Debug, Default)]
pub struct EditSet {
    pub files: Vec<u32>,
    pub lines: Vec<LineView>,
}

/// Everything needed to score one instance.
#[derive(Clone, Debug, Default)]
pub struct Instance {
    pub files: Vec<FileInfo>,
    pub gold: ViewSet,
    pub steps: Vec<ViewSet>,
    /// The declared (or otherwise chosen) final context; `None` means the union of the steps.
    pub final_context: Option<ViewSet>,
    /// Edit locations of the gold patch (`None`: no gold patch, EditLoc undefined).
    pub gold_edits: Option<EditSet>,
    /// Edit locations of the model patch (`None`: no model patch).
    pub pred_edits: Option<EditSet>,
    /// What the ranked metrics are computed from (`None`: no ranking block).
    pub ranking: Option<RankingInput>,
}

/// One value per granularity.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PerGranularity<T> {
    pub file: T,
    pub symbol: T,
    pub span: T,
    pub line: T,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StepResult {
    pub coverage: PerGranularity<Option<f64>>,
    /// |V_t|: how much this step showed.
    pub viewed: PerGranularity<i64>,
    /// How much of it was new (not in U_{t-1}).
    pub new: PerGranularity<i64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TrajectoryResult {
    pub steps: Vec<StepResult>,
    pub auc_coverage: PerGranularity<Option<f64>>,
    pub redundancy: PerGranularity<f64>,
    /// 1-based index of the first step that showed any gold (`None`: never).
    pub first_gold_step: PerGranularity<Option<u32>>,
    /// |U_T ∩ G|: gold seen at any time during the run.
    pub seen_gold: PerGranularity<i64>,
    /// |(U_T ∩ G) \ P|: gold seen during the run but missing from the final context
    /// (`None` under the contextbench preset, which has no such measure).
    pub evidence_drop: PerGranularity<Option<i64>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EditLocResult {
    /// Line level; `coverage` is the recall.
    pub line: Score,
    /// File level (`None` under the contextbench preset, which has no such measure).
    pub file: Option<Score>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct InstanceResult {
    pub num_steps: usize,
    pub final_scores: PerGranularity<Score>,
    pub trajectory: TrajectoryResult,
    pub editloc: Option<EditLocResult>,
    pub ranking: Option<RankingResult>,
}

/// Line sets in the arithmetic of the preset.
#[derive(Clone, Debug)]
enum Lines {
    Clean(FileMap<u32>),
    Raw(Vec<RawRanges>),
}

/// A view set resolved against the files: what it covers at each granularity.
#[derive(Clone, Debug)]
struct Coverage {
    /// File ids, sorted and distinct.
    files: Vec<u32>,
    /// Symbol ids, sorted and distinct.
    symbols: Vec<u32>,
    bytes: FileMap<u64>,
    lines: Lines,
    /// Files whose bytes or lines are non-empty (for incremental updates), sorted.
    touched: Vec<u32>,
}

struct Ctx<'a> {
    preset: Preset,
    files: &'a [FileInfo],
    sym_offset: Vec<u32>,
    n_symbols: usize,
}

impl<'a> Ctx<'a> {
    fn new(preset: Preset, files: &'a [FileInfo]) -> Self {
        let mut sym_offset = Vec::with_capacity(files.len());
        let mut n = 0u32;
        for f in files {
            sym_offset.push(n);
            n += f.symbols.len() as u32;
        }
        Self {
            preset,
            files,
            sym_offset,
            n_symbols: n as usize,
        }
    }

    fn empty(&self) -> Coverage {
        let n = self.files.len();
        Coverage {
            files: Vec::new(),
            symbols: Vec::new(),
            bytes: FileMap::with_files(n),
            lines: match self.preset {
                Preset::Strict => Lines::Clean(FileMap::with_files(n)),
                Preset::ContextBench => Lines::Raw(vec![Vec::new(); n]),
            },
            touched: Vec::new(),
        }
    }

    fn index(&self, file: u32) -> Option<&LineIndex> {
        self.files
            .get(file as usize)
            .and_then(|f| f.index.as_deref())
    }

    fn resolve(&self, vs: &ViewSet, is_gold: bool) -> Coverage {
        let mut c = self.empty();
        let n = self.files.len() as u32;
        match self.preset {
            Preset::Strict => {
                let Lines::Clean(lines) = &mut c.lines else {
                    unreachable!()
                };
                for lv in vs.lines.iter().filter(|lv| lv.file < n) {
                    let Some(ix) = self.index(lv.file) else {
                        continue;
                    };
                    match ix.clip(lv.start, lv.end) {
                        Some((a, b)) => {
                            lines.entry(lv.file).insert_inclusive(a, b);
                            if let Some((x, y)) = ix.lines_bytes(a, b) {
                                c.bytes.insert(lv.file, x, y);
                            }
                            c.files.push(lv.file);
                        }
                        // A whole-file view of an empty file still shows the file.
                        None if lv.end.is_none() && ix.is_empty() => {
                            c.files.push(lv.file);
                        }
                        None => {}
                    }
                }
                for &f in vs.files.iter().filter(|&&f| f < n) {
                    if self.index(f).is_some() {
                        c.files.push(f);
                    }
                }
            }
            Preset::ContextBench => {
                let Lines::Raw(lines) = &mut c.lines else {
                    unreachable!()
                };
                for lv in vs.lines.iter().filter(|lv| lv.file < n) {
                    let ix = self.index(lv.file);
                    let end = match (lv.end, ix) {
                        (Some(e), _) => e,
                        (None, Some(ix)) => i64::from(ix.line_count()),
                        (None, None) => continue,
                    };
                    // Predicted lines need positive numbers; gold lines are taken raw.
                    if is_gold || (lv.start > 0 && end > 0) {
                        lines[lv.file as usize].push((lv.start, end));
                    }
                    if let Some((x, y)) = ix.and_then(|ix| ix.cb_line_to_byte(lv.start, end)) {
                        c.bytes.insert(lv.file, x, y);
                    }
                }
                for l in lines.iter_mut() {
                    *l = rawlines::merge(l);
                }
                // Files are exactly the listed ones.
                for &f in vs.files.iter().filter(|&&f| f < n) {
                    c.files.push(f);
                }
            }
        }
        for &(f, i) in &vs.symbols {
            if let Some(info) = self.files.get(f as usize) {
                if (i as usize) < info.symbols.len() {
                    let id = self.sym_offset[f as usize] + i;
                    c.symbols.push(id);
                }
            }
        }
        let touch = self.preset == Preset::ContextBench;
        let bytes_files: Vec<u32> = c.bytes.files().map(|(f, _)| f).collect();
        if !vs.symbols_only {
            for &f in &bytes_files {
                let ranges = c.bytes.get(f).expect("listed file");
                let base = self.sym_offset[f as usize];
                for (k, &(s, e)) in self.files[f as usize].symbols.iter().enumerate() {
                    if ranges.overlaps(s, e, touch) {
                        c.symbols.push(base + k as u32);
                    }
                }
            }
        }
        let mut touched = bytes_files;
        match &c.lines {
            Lines::Clean(m) => touched.extend(m.files().map(|(f, _)| f)),
            Lines::Raw(v) => touched.extend(
                v.iter()
                    .enumerate()
                    .filter(|(_, r)| !r.is_empty())
                    .map(|(f, _)| f as u32),
            ),
        }
        touched.sort_unstable();
        touched.dedup();
        c.touched = touched;
        c.files.sort_unstable();
        c.files.dedup();
        c.symbols.sort_unstable();
        c.symbols.dedup();
        c
    }
}

/// |a ∩ b| of two sorted, distinct id lists.
fn count_common(a: &[u32], b: &[u32]) -> i64 {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

fn mask(ids: &[u32], n: usize) -> Vec<bool> {
    let mut m = vec![false; n];
    for &i in ids {
        m[i as usize] = true;
    }
    m
}

impl Coverage {
    fn line_size_of(&self, f: u32) -> i64 {
        match &self.lines {
            Lines::Clean(m) => m.get(f).map_or(0, |r| r.measure() as i64),
            Lines::Raw(v) => rawlines::length(&v[f as usize]),
        }
    }

    fn line_inter_of(&self, other: &Coverage, f: u32) -> i64 {
        match (&self.lines, &other.lines) {
            (Lines::Clean(a), Lines::Clean(b)) => match (a.get(f), b.get(f)) {
                (Some(x), Some(y)) => x.intersection_measure(y) as i64,
                _ => 0,
            },
            (Lines::Raw(a), Lines::Raw(b)) => {
                rawlines::intersect_size(&a[f as usize], &b[f as usize])
            }
            _ => unreachable!("one preset per instance"),
        }
    }

    fn byte_inter_of(&self, other: &Coverage, f: u32) -> i64 {
        match (self.bytes.get(f), other.bytes.get(f)) {
            (Some(x), Some(y)) => x.intersection_measure(y) as i64,
            _ => 0,
        }
    }

    fn sizes(&self) -> PerGranularity<i64> {
        PerGranularity {
            file: self.files.len() as i64,
            symbol: self.symbols.len() as i64,
            span: self.bytes.measure() as i64,
            line: self.touched.iter().map(|&f| self.line_size_of(f)).sum(),
        }
    }

    fn intersection(&self, other: &Coverage) -> PerGranularity<i64> {
        let mut span = 0;
        let mut line = 0;
        for &f in &self.touched {
            span += self.byte_inter_of(other, f);
            line += self.line_inter_of(other, f);
        }
        PerGranularity {
            file: count_common(&self.files, &other.files),
            symbol: count_common(&self.symbols, &other.symbols),
            span,
            line,
        }
    }
}

/// The union of the views so far, with its intersection with gold kept up to date per file.
struct Union<'g> {
    cov: Coverage,
    gold: &'g Coverage,
    gold_files: Vec<bool>,
    gold_symbols: Vec<bool>,
    seen_files: Vec<bool>,
    seen_symbols: Vec<bool>,
    inter: PerGranularity<i64>,
    size: PerGranularity<i64>,
    line_inter_by_file: Vec<i64>,
    byte_inter_by_file: Vec<i64>,
    line_size_by_file: Vec<i64>,
}

impl<'g> Union<'g> {
    fn new(empty: Coverage, gold: &'g Coverage, n_files: usize, n_symbols: usize) -> Self {
        Self {
            cov: empty,
            gold,
            gold_files: mask(&gold.files, n_files),
            gold_symbols: mask(&gold.symbols, n_symbols),
            seen_files: vec![false; n_files],
            seen_symbols: vec![false; n_symbols],
            inter: PerGranularity::default(),
            size: PerGranularity::default(),
            line_inter_by_file: vec![0; n_files],
            byte_inter_by_file: vec![0; n_files],
            line_size_by_file: vec![0; n_files],
        }
    }

    /// Add one step; returns how much of it was new at each granularity.
    fn add(&mut self, step: &Coverage) -> PerGranularity<i64> {
        let before = self.size;
        for &f in &step.files {
            if !std::mem::replace(&mut self.seen_files[f as usize], true) {
                self.cov.files.push(f);
                self.size.file += 1;
                self.inter.file += i64::from(self.gold_files[f as usize]);
            }
        }
        for &s in &step.symbols {
            if !std::mem::replace(&mut self.seen_symbols[s as usize], true) {
                self.cov.symbols.push(s);
                self.size.symbol += 1;
                self.inter.symbol += i64::from(self.gold_symbols[s as usize]);
            }
        }
        for &f in &step.touched {
            let fi = f as usize;
            if let Some(r) = step.bytes.get(f) {
                if !r.is_empty() {
                    let old = self.cov.bytes.get(f).map_or(0, |x| x.measure());
                    self.cov.bytes.entry(f).union_with(r);
                    let new = self.cov.bytes.get(f).map_or(0, |x| x.measure());
                    self.size.span += (new - old) as i64;
                    let inter = self.cov.byte_inter_of(self.gold, f);
                    self.inter.span += inter - self.byte_inter_by_file[fi];
                    self.byte_inter_by_file[fi] = inter;
                }
            }
            match (&mut self.cov.lines, &step.lines) {
                (Lines::Clean(u), Lines::Clean(s)) => {
                    if let Some(r) = s.get(f) {
                        u.entry(f).union_with(r);
                    }
                }
                (Lines::Raw(u), Lines::Raw(s)) => {
                    let mut joined = std::mem::take(&mut u[fi]);
                    joined.extend_from_slice(&s[fi]);
                    u[fi] = rawlines::merge(&joined);
                }
                _ => unreachable!("one preset per instance"),
            }
            let size = self.cov.line_size_of(f);
            self.size.line += size - self.line_size_by_file[fi];
            self.line_size_by_file[fi] = size;
            let inter = self.cov.line_inter_of(self.gold, f);
            self.inter.line += inter - self.line_inter_by_file[fi];
            self.line_inter_by_file[fi] = inter;
        }
        for &f in &step.touched {
            if let Err(pos) = self.cov.touched.binary_search(&f) {
                self.cov.touched.insert(pos, f);
            }
        }
        PerGranularity {
            file: self.size.file - before.file,
            symbol: self.size.symbol - before.symbol,
            span: self.size.span - before.span,
            line: self.size.line - before.line,
        }
    }
}

/// Score one instance.
pub fn evaluate(inst: &Instance, preset: Preset) -> InstanceResult {
    let ctx = Ctx::new(preset, &inst.files);
    let policy = preset.empty_sets();
    let gold = ctx.resolve(&inst.gold, true);
    let gold_size = gold.sizes();

    // The reference scores a trajectory without steps as one step equal to the final context.
    let fallback;
    let step_sets: &[ViewSet] = if inst.steps.is_empty() && preset == Preset::ContextBench {
        fallback = vec![inst.final_context.clone().unwrap_or_default()];
        &fallback
    } else {
        &inst.steps
    };

    let mut union = Union::new(ctx.empty(), &gold, inst.files.len(), ctx.n_symbols);
    let mut ranker = inst
        .ranking
        .as_ref()
        .map(|r| Ranker::new(r, &inst.files, &ctx.sym_offset));
    let mut steps = Vec::with_capacity(step_sets.len());
    let mut viewed_total = PerGranularity::<i64>::default();
    let mut first_gold_step = PerGranularity::<Option<u32>>::default();
    let mut auc_sum = PerGranularity::<f64>::default();
    // The reference scores line coverage of a step as 0 when gold has no line ranges at all.
    let no_gold_lines = preset == Preset::ContextBench
        && matches!(&gold.lines, Lines::Raw(v) if v.iter().all(Vec::is_empty));
    for (t, vs) in step_sets.iter().enumerate() {
        let cov = ctx.resolve(vs, false);
        if let Some(r) = ranker.as_mut() {
            r.step(t as u32 + 1, vs, &cov.files, &cov.symbols);
        }
        let viewed = cov.sizes();
        let new = union.add(&cov);
        viewed_total.file += viewed.file;
        viewed_total.symbol += viewed.symbol;
        viewed_total.span += viewed.span;
        viewed_total.line += viewed.line;
        let inter = union.inter;
        let mut coverage = PerGranularity {
            file: policy.coverage(inter.file, gold_size.file),
            symbol: policy.coverage(inter.symbol, gold_size.symbol),
            span: policy.coverage(inter.span, gold_size.span),
            line: policy.coverage(inter.line, gold_size.line),
        };
        if no_gold_lines {
            coverage.line = Some(0.0);
        }
        let step_no = t as u32 + 1;
        for (slot, hit) in [
            (&mut first_gold_step.file, inter.file),
            (&mut first_gold_step.symbol, inter.symbol),
            (&mut first_gold_step.span, inter.span),
            (&mut first_gold_step.line, inter.line),
        ] {
            if slot.is_none() && hit > 0 {
                *slot = Some(step_no);
            }
        }
        auc_sum.file += coverage.file.unwrap_or(0.0);
        auc_sum.symbol += coverage.symbol.unwrap_or(0.0);
        auc_sum.span += coverage.span.unwrap_or(0.0);
        auc_sum.line += coverage.line.unwrap_or(0.0);
        steps.push(StepResult {
            coverage,
            viewed,
            new,
        });
    }
    let t = steps.len();
    let defined = |g: i64, sum: f64| -> Option<f64> {
        if preset == Preset::Strict && g <= 0 {
            None
        } else if t == 0 {
            Some(0.0)
        } else {
            Some(sum / t as f64)
        }
    };
    let auc_coverage = PerGranularity {
        file: defined(gold_size.file, auc_sum.file),
        symbol: defined(gold_size.symbol, auc_sum.symbol),
        span: defined(gold_size.span, auc_sum.span),
        line: if no_gold_lines && t > 0 {
            Some(0.0)
        } else {
            defined(gold_size.line, auc_sum.line)
        },
    };
    let union_size = union.size;
    let redundancy = PerGranularity {
        file: redundancy(union_size.file, viewed_total.file),
        symbol: redundancy(union_size.symbol, viewed_total.symbol),
        span: redundancy(union_size.span, viewed_total.span),
        line: redundancy(union_size.line, viewed_total.line),
    };

    union.cov.files.sort_unstable();
    union.cov.symbols.sort_unstable();
    // Final context: declared, or the union of the steps.
    let final_cov = match &inst.final_context {
        Some(vs) => ctx.resolve(vs, false),
        None => union.cov.clone(),
    };
    let pred_size = final_cov.sizes();
    let inter = final_cov.intersection(&gold);
    let final_scores = PerGranularity {
        file: policy.score(inter.file, gold_size.file, pred_size.file),
        symbol: policy.score(inter.symbol, gold_size.symbol, pred_size.symbol),
        span: policy.score(inter.span, gold_size.span, pred_size.span),
        line: policy.score(inter.line, gold_size.line, pred_size.line),
    };

    let seen_gold = union.inter;
    let evidence_drop = match preset {
        Preset::Strict => {
            let d = evidence_drop(&union.cov, &gold, &final_cov, seen_gold);
            PerGranularity::from_fn(|i| Some(d.values()[i]))
        }
        Preset::ContextBench => PerGranularity::default(),
    };

    let editloc = match preset {
        Preset::Strict => editloc_strict(&ctx, inst),
        Preset::ContextBench => editloc_contextbench(inst, &gold),
    };

    let ranking = ranker.map(|r| r.finish(&crate::ranking::clean_lines(&inst.files, &inst.gold)));

    InstanceResult {
        num_steps: t,
        final_scores,
        trajectory: TrajectoryResult {
            steps,
            auc_coverage,
            redundancy,
            first_gold_step,
            seen_gold,
            evidence_drop,
        },
        editloc,
        ranking,
    }
}

fn redundancy(union: i64, total: i64) -> f64 {
    if total > 0 {
        1.0 - union as f64 / total as f64
    } else {
        0.0
    }
}

/// |(U ∩ G) \ P| per granularity, from |U ∩ G| − |U ∩ G ∩ P|.
fn evidence_drop(
    union: &Coverage,
    gold: &Coverage,
    fin: &Coverage,
    seen: PerGranularity<i64>,
) -> PerGranularity<i64> {
    let both = |a: &[u32], b: &[u32], c: &[u32]| {
        a.iter()
            .filter(|x| b.binary_search(x).is_ok() && c.binary_search(x).is_ok())
            .count() as i64
    };
    let mut span = 0;
    let mut line = 0;
    for &f in &union.touched {
        if let (Some(u), Some(g), Some(p)) =
            (union.bytes.get(f), gold.bytes.get(f), fin.bytes.get(f))
        {
            span += u.intersection(g).intersection_measure(p) as i64;
        }
        if let (Lines::Clean(u), Lines::Clean(g), Lines::Clean(p)) =
            (&union.lines, &gold.lines, &fin.lines)
        {
            if let (Some(u), Some(g), Some(p)) = (u.get(f), g.get(f), p.get(f)) {
                line += u.intersection(g).intersection_measure(p) as i64;
            }
        }
    }
    PerGranularity {
        file: seen.file - both(&union.files, &gold.files, &fin.files),
        symbol: seen.symbol - both(&union.symbols, &gold.symbols, &fin.symbols),
        span: seen.span - span,
        line: seen.line - line,
    }
}

/// Lines of an edit set as clean per-file line sets (clipped to the file when it exists).
fn edit_lines(ctx: &Ctx, es: &EditSet) -> FileMap<u32> {
    let mut m = FileMap::with_files(ctx.files.len());
    for lv in &es.lines {
        let end = lv.end.unwrap_or(lv.start);
        let (a, b) = if lv.start <= end {
            (lv.start, end)
        } else {
            (end, lv.start)
        };
        let a = a.max(1);
        if b >= a && b <= i64::from(u32::MAX - 1) {
            m.entry(lv.file).insert_inclusive(a as u32, b as u32);
        }
    }
    m
}

fn editloc_strict(ctx: &Ctx, inst: &Instance) -> Option<EditLocResult> {
    let gold = inst.gold_edits.as_ref()?;
    let empty = EditSet::default();
    let pred = inst.pred_edits.as_ref().unwrap_or(&empty);
    let (gl, pl) = (edit_lines(ctx, gold), edit_lines(ctx, pred));
    let policy = EmptySetPolicy::Strict;
    let line = policy.score(
        gl.intersection_measure(&pl) as i64,
        gl.measure() as i64,
        pl.measure() as i64,
    );
    let set = |files: &[u32]| {
        let mut v = files.to_vec();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (gf, pf) = (set(&gold.files), set(&pred.files));
    let common = gf.iter().filter(|f| pf.binary_search(f).is_ok()).count() as i64;
    let file = Some(policy.score(common, gf.len() as i64, pf.len() as i64));
    Some(EditLocResult { line, file })
}

/// The reference's EditLoc: the model patch's removed lines (one count per listed line), hits
/// being those inside a gold context range of the same file; recall = precision = hits / removed;
/// the gold size is the number of gold context lines.
fn editloc_contextbench(inst: &Instance, gold: &Coverage) -> Option<EditLocResult> {
    let pred = inst.pred_edits.as_ref()?;
    let Lines::Raw(gold_lines) = &gold.lines else {
        return None;
    };
    let mut pred_count: i64 = 0;
    let mut hits: i64 = 0;
    for lv in &pred.lines {
        let end = lv.end.unwrap_or(lv.start);
        let ranges = gold_lines
            .get(lv.file as usize)
            .map_or(&[][..], Vec::as_slice);
        for line in lv.start..=end {
            pred_count += 1;
            if ranges.iter().any(|&(a, b)| a <= line && line <= b) {
                hits += 1;
            }
        }
    }
    let gold_count: i64 = gold_lines.iter().flatten().map(|&(a, b)| b - a + 1).sum();
    let ratio = if pred_count > 0 {
        hits as f64 / pred_count as f64
    } else {
        0.0
    };
    let line = Score {
        coverage: Some(ratio),
        precision: Some(ratio),
        f1: Some(crate::metrics::f1(ratio, ratio)),
        intersection: hits,
        gold_size: gold_count,
        pred_size: pred_count,
    };
    Some(EditLocResult { line, file: None })
}

impl StepResult {
    pub fn coverage_values(&self) -> [Option<f64>; 4] {
        let c = self.coverage;
        [c.file, c.symbol, c.span, c.line]
    }
}

impl<T: Copy> PerGranularity<T> {
    pub fn values(&self) -> [T; 4] {
        [self.file, self.symbol, self.span, self.line]
    }

    pub fn from_fn(mut f: impl FnMut(usize) -> T) -> Self {
        Self {
            file: f(0),
            symbol: f(1),
            span: f(2),
            line: f(3),
        }
    }
}

/// Score many instances in parallel on `threads` worker threads (0: rayon's default).
pub fn evaluate_batch(
    instances: &[Instance],
    preset: Preset,
    threads: usize,
) -> Vec<InstanceResult> {
    use rayon::prelude::*;
    let run = || instances.par_iter().map(|i| evaluate(i, preset)).collect();
    if threads == 1 {
        return instances.iter().map(|i| evaluate(i, preset)).collect();
    }
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    }
}
