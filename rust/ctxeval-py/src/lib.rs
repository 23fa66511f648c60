//! `ctxeval._core`: a thin PyO3 layer over `ctxeval-core`.
//!
//! It converts plain Python values (dicts, lists, tuples) to the core's types, runs the
//! arithmetic with the GIL released, and converts results back. No metric logic lives here.

mod stats;

use std::sync::Arc;

use ctxeval_core::ranking::{LevelResult, RankScores, NO_ITEM};
use ctxeval_core::{
    self as core, EditSet, FileInfo, Instance, InstanceResult, LineView, PerGranularity, Preset,
    RankLevel, RankRules, RankingInput, Score, ViewSet,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyBytesMethods, PyDict, PyList, PyString};

/// Line ↔ byte mapping of one file's exact bytes (built once per blob, shared by instances).
#[pyclass(frozen, name = "LineIndex", module = "ctxeval._core")]
struct PyLineIndex {
    inner: Arc<core::LineIndex>,
}

#[pymethods]
impl PyLineIndex {
    #[new]
    fn new(py: Python<'_>, data: &[u8]) -> Self {
        let inner = if data.len() > 1 << 20 {
            let owned = data.to_vec();
            py.detach(move || core::LineIndex::new(&owned))
        } else {
            core::LineIndex::new(data)
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    #[getter]
    fn line_count(&self) -> u32 {
        self.inner.line_count()
    }

    #[getter]
    fn byte_len(&self) -> u64 {
        self.inner.len()
    }

    #[getter]
    fn ends_with_newline(&self) -> bool {
        self.inner.ends_with_newline()
    }

    fn line_bytes(&self, line: u32) -> Option<(u64, u64)> {
        self.inner.line_bytes(line)
    }

    fn lines_bytes(&self, first: u32, last: u32) -> Option<(u64, u64)> {
        self.inner.lines_bytes(first, last)
    }

    fn line_of(&self, byte: u64) -> Option<u32> {
        self.inner.line_of(byte)
    }

    #[pyo3(signature = (start, end=None))]
    fn clip(&self, start: i64, end: Option<i64>) -> Option<(u32, u32)> {
        self.inner.clip(start, end)
    }

    fn __len__(&self) -> usize {
        self.inner.line_count() as usize
    }

    fn __repr__(&self) -> String {
        format!(
            "LineIndex(lines={}, bytes={})",
            self.inner.line_count(),
            self.inner.len()
        )
    }
}

fn parse_preset(name: &str) -> PyResult<Preset> {
    match name {
        // `locagent` reads and scores context as `strict` does; it changes only the ranked
        // metrics, whose rules come with each instance's ranking input.
        "strict" | "locagent" => Ok(Preset::Strict),
        "contextbench" => Ok(Preset::ContextBench),
        other => Err(PyValueError::new_err(format!(
            "unknown preset {other:?}: expected 'strict', 'contextbench' or 'locagent'"
        ))),
    }
}

fn parse_rules(name: &str) -> PyResult<RankRules> {
    match name {
        "strict" => Ok(RankRules::Strict),
        "locagent" => Ok(RankRules::LocAgent),
        other => Err(PyValueError::new_err(format!(
            "unknown ranking rules {other:?}: expected 'strict' or 'locagent'"
        ))),
    }
}

/// Item ids given as native-endian i64 bytes (None: not a whole number of them).
fn native_ids(b: &[u8]) -> Option<Vec<u32>> {
    if b.len() % 8 != 0 {
        return None;
    }
    Some(
        b.chunks_exact(8)
            .map(|c| {
                let x = i64::from_ne_bytes(c.try_into().expect("8 bytes"));
                u32::try_from(x).unwrap_or(NO_ITEM)
            })
            .collect(),
    )
}

/// Item ids as Python gives them: a negative id is no item.
fn items(v: Vec<i64>) -> Vec<u32> {
    v.into_iter()
        .map(|x| u32::try_from(x).unwrap_or(NO_ITEM))
        .collect()
}

fn ranking_input(obj: &Bound<'_, PyAny>) -> PyResult<RankingInput> {
    let what = "ranking";
    let d = obj
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("ranking: expected a dict"))?;
    let ks: Vec<u32> = match get(d, "ks")? {
        Some(v) => v.extract().map_err(|e| field_err(what, "ks", e))?,
        None => Vec::new(),
    };
    let rules = match get(d, "rules")? {
        Some(v) => parse_rules(
            &v.extract::<String>()
                .map_err(|e| field_err(what, "rules", e))?,
        )?,
        None => RankRules::Strict,
    };
    let budget: Option<u64> = match get(d, "budget")? {
        Some(v) => Some(v.extract().map_err(|e| field_err(what, "budget", e))?),
        None => None,
    };
    let budget_lines = match get(d, "budget_lines")? {
        Some(v) => {
            let raw: Vec<(u32, i64, Option<i64>)> = v
                .extract()
                .map_err(|e| field_err(what, "budget_lines", e))?;
            Some(
                raw.into_iter()
                    .map(|(file, start, end)| LineView { file, start, end })
                    .collect(),
            )
        }
        None => None,
    };
    let mut levels = Vec::new();
    if let Some(list) = get(d, "levels")? {
        for (k, lv) in list.try_iter()?.enumerate() {
            let lv = lv?;
            let ld = lv.cast::<PyDict>().map_err(|_| {
                PyTypeError::new_err(format!("ranking.levels[{k}]: expected a dict"))
            })?;
            let at = format!("ranking.levels[{k}]");
            let list_of = |key: &str| -> PyResult<Option<Vec<i64>>> {
                match get(ld, key)? {
                    Some(v) => Ok(Some(v.extract().map_err(|e| field_err(&at, key, e))?)),
                    None => Ok(None),
                }
            };
            let mut symbol_items: Vec<Vec<u32>> = Vec::new();
            if let Some(v) = get(ld, "symbol_items")? {
                for (f, per_file) in v.try_iter()?.enumerate() {
                    let per_file = per_file?;
                    symbol_items.push(match per_file.cast::<PyBytes>() {
                        // the ids of a file's definitions as native-endian i64 (what Python's
                        // array('q').tobytes() gives): read in place, not as a list of ints
                        Ok(b) => native_ids(b.as_bytes()).ok_or_else(|| {
                            PyValueError::new_err(format!(
                                "{at}: symbol_items[{f}]: byte length not a multiple of 8"
                            ))
                        })?,
                        Err(_) => items(
                            per_file
                                .extract()
                                .map_err(|e| field_err(&at, "symbol_items", e))?,
                        ),
                    });
                }
            }
            levels.push(RankLevel {
                gold: items(list_of("gold")?.unwrap_or_default()),
                pred: list_of("pred")?.map(items),
                file_items: items(list_of("file_items")?.unwrap_or_default()),
                symbol_items,
            });
        }
    }
    Ok(RankingInput {
        ks,
        rules,
        levels,
        budget,
        budget_lines,
    })
}

fn get<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(d.get_item(key)?.filter(|v| !v.is_none()))
}

fn field_err(what: &str, key: &str, err: PyErr) -> PyErr {
    PyTypeError::new_err(format!("{what}: field {key:?}: {err}"))
}

fn lines_of(d: &Bound<'_, PyDict>, what: &str) -> PyResult<Vec<LineView>> {
    let Some(v) = get(d, "lines")? else {
        return Ok(Vec::new());
    };
    let raw: Vec<(u32, i64, Option<i64>)> = v.extract().map_err(|e| field_err(what, "lines", e))?;
    Ok(raw
        .into_iter()
        .map(|(file, start, end)| LineView { file, start, end })
        .collect())
}

fn view_set(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<ViewSet> {
    let d = obj
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err(format!("{what}: expected a dict")))?;
    let files = match get(d, "files")? {
        Some(v) => v.extract().map_err(|e| field_err(what, "files", e))?,
        None => Vec::new(),
    };
    let symbols = match get(d, "symbols")? {
        Some(v) => v.extract().map_err(|e| field_err(what, "symbols", e))?,
        None => Vec::new(),
    };
    let symbols_only = match get(d, "symbols_only")? {
        Some(v) => v
            .extract()
            .map_err(|e| field_err(what, "symbols_only", e))?,
        None => false,
    };
    Ok(ViewSet {
        lines: lines_of(d, what)?,
        files,
        symbols,
        symbols_only,
    })
}

fn edit_set(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<EditSet> {
    let d = obj
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err(format!("{what}: expected a dict")))?;
    let files = match get(d, "files")? {
        Some(v) => v.extract().map_err(|e| field_err(what, "files", e))?,
        None => Vec::new(),
    };
    Ok(EditSet {
        files,
        lines: lines_of(d, what)?,
    })
}

fn instance(obj: &Bound<'_, PyAny>) -> PyResult<Instance> {
    let d = obj
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("instance: expected a dict"))?;
    let mut files = Vec::new();
    if let Some(list) = get(d, "files")? {
        for (k, item) in list.try_iter()?.enumerate() {
            let item = item?;
            let fd = item
                .cast::<PyDict>()
                .map_err(|_| PyTypeError::new_err(format!("files[{k}]: expected a dict")))?;
            let index = match get(fd, "index")? {
                Some(ix) => Some(
                    ix.cast::<PyLineIndex>()
                        .map_err(|_| {
                            PyTypeError::new_err(format!(
                                "files[{k}]: field \"index\": expected a LineIndex"
                            ))
                        })?
                        .get()
                        .inner
                        .clone(),
                ),
                None => None,
            };
            let mut symbols: Vec<(u64, u64)> = match get(fd, "symbols")? {
                Some(v) => v
                    .extract()
                    .map_err(|e| field_err(&format!("files[{k}]"), "symbols", e))?,
                None => Vec::new(),
            };
            symbols.shrink_to_fit();
            files.push(FileInfo { index, symbols });
        }
    }
    let gold = match get(d, "gold")? {
        Some(v) => view_set(&v, "gold")?,
        None => ViewSet::default(),
    };
    let mut steps = Vec::new();
    if let Some(list) = get(d, "steps")? {
        for (k, s) in list.try_iter()?.enumerate() {
            steps.push(view_set(&s?, &format!("steps[{k}]"))?);
        }
    }
    Ok(Instance {
        files,
        gold,
        steps,
        final_context: get(d, "final")?
            .map(|v| view_set(&v, "final"))
            .transpose()?,
        gold_edits: get(d, "gold_edits")?
            .map(|v| edit_set(&v, "gold_edits"))
            .transpose()?,
        pred_edits: get(d, "pred_edits")?
            .map(|v| edit_set(&v, "pred_edits"))
            .transpose()?,
        ranking: get(d, "ranking")?.map(|v| ranking_input(&v)).transpose()?,
    })
}

const GRANULARITIES: [&str; 4] = ["file", "symbol", "span", "line"];

/// Dict keys, created once per interpreter instead of once per value written.
struct Keys<'py> {
    gran: [Bound<'py, PyString>; 4],
    step: Bound<'py, PyString>,
    coverage: Bound<'py, PyString>,
    viewed: Bound<'py, PyString>,
    new: Bound<'py, PyString>,
}

impl<'py> Keys<'py> {
    fn new(py: Python<'py>) -> Self {
        Self {
            gran: GRANULARITIES.map(|g| PyString::intern(py, g)),
            step: intern!(py, "step").clone(),
            coverage: intern!(py, "coverage").clone(),
            viewed: intern!(py, "viewed").clone(),
            new: intern!(py, "new").clone(),
        }
    }
}

fn per_gran<'py, T: Copy + IntoPyObject<'py>>(
    py: Python<'py>,
    keys: &Keys<'py>,
    v: &PerGranularity<T>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, x) in keys.gran.iter().zip(v.values()) {
        d.set_item(k, x)?;
    }
    Ok(d)
}

fn score_dict<'py>(py: Python<'py>, s: &Score, recall_key: &str) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(recall_key, s.coverage)?;
    d.set_item("precision", s.precision)?;
    d.set_item("f1", s.f1)?;
    d.set_item("intersection", s.intersection)?;
    d.set_item("gold_size", s.gold_size)?;
    d.set_item("pred_size", s.pred_size)?;
    Ok(d)
}

fn result_dict<'py>(
    py: Python<'py>,
    keys: &Keys<'py>,
    r: &InstanceResult,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("num_steps", r.num_steps)?;
    let fin = PyDict::new(py);
    for (k, s) in GRANULARITIES.iter().zip(r.final_scores.values()) {
        fin.set_item(k, score_dict(py, &s, "coverage")?)?;
    }
    out.set_item("final", fin)?;
    let t = &r.trajectory;
    let traj = PyDict::new(py);
    let steps = PyList::empty(py);
    for (i, s) in t.steps.iter().enumerate() {
        let sd = PyDict::new(py);
        sd.set_item(&keys.step, i + 1)?;
        sd.set_item(&keys.coverage, per_gran(py, keys, &s.coverage)?)?;
        sd.set_item(&keys.viewed, per_gran(py, keys, &s.viewed)?)?;
        sd.set_item(&keys.new, per_gran(py, keys, &s.new)?)?;
        steps.append(sd)?;
    }
    traj.set_item("steps", steps)?;
    traj.set_item("auc_coverage", per_gran(py, keys, &t.auc_coverage)?)?;
    traj.set_item("redundancy", per_gran(py, keys, &t.redundancy)?)?;
    traj.set_item("first_gold_step", per_gran(py, keys, &t.first_gold_step)?)?;
    traj.set_item("seen_gold", per_gran(py, keys, &t.seen_gold)?)?;
    traj.set_item("evidence_drop", per_gran(py, keys, &t.evidence_drop)?)?;
    out.set_item("trajectory", traj)?;
    match &r.editloc {
        Some(e) => {
            let d = score_dict(py, &e.line, "recall")?;
            match &e.file {
                Some(f) => d.set_item("file", score_dict(py, f, "recall")?)?,
                None => d.set_item("file", py.None())?,
            }
            out.set_item("editloc", d)?;
        }
        None => out.set_item("editloc", py.None())?,
    }
    match &r.ranking {
        Some(rk) => {
            let d = PyDict::new(py);
            let levels = PyList::empty(py);
            for lvl in &rk.levels {
                levels.append(level_dict(py, lvl)?)?;
            }
            d.set_item("levels", levels)?;
            match &rk.budget {
                Some(b) => {
                    let bd = PyDict::new(py);
                    bd.set_item("lines", b.lines)?;
                    bd.set_item("used", b.used)?;
                    bd.set_item("line", b.line_recall)?;
                    bd.set_item("file", b.file_recall)?;
                    d.set_item("budget", bd)?;
                }
                None => d.set_item("budget", py.None())?,
            }
            out.set_item("ranking", d)?;
        }
        None => out.set_item("ranking", py.None())?,
    }
    Ok(out)
}

/// `{"at": [{"k", "acc", "recall", "precision", "ndcg", "map"}, ...], "mrr", "first_hit",
/// "gold_size", "pred_size"}`.
fn scores_dict<'py>(py: Python<'py>, s: &RankScores) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let at = PyList::empty(py);
    for a in &s.at {
        let ad = PyDict::new(py);
        ad.set_item("k", a.k)?;
        ad.set_item("acc", a.acc)?;
        ad.set_item("recall", a.recall)?;
        ad.set_item("precision", a.precision)?;
        ad.set_item("ndcg", a.ndcg)?;
        ad.set_item("map", a.map)?;
        at.append(ad)?;
    }
    d.set_item("at", at)?;
    d.set_item("mrr", s.mrr)?;
    d.set_item("first_hit", s.first_hit)?;
    d.set_item("gold_size", s.gold_size)?;
    d.set_item("pred_size", s.pred_size)?;
    Ok(d)
}

fn level_dict<'py>(py: Python<'py>, l: &LevelResult) -> PyResult<Bound<'py, PyDict>> {
    let d = scores_dict(py, &l.scores)?;
    d.set_item("first_gold_step", l.first_gold_step)?;
    d.set_item("declared", l.declared)?;
    Ok(d)
}

/// Ranked metrics of one ranking against one gold list (see `ctxeval/_core.pyi`).
#[pyfunction]
#[pyo3(signature = (pred, gold, ks, rules="strict"))]
fn rank_scores<'py>(
    py: Python<'py>,
    pred: Vec<i64>,
    gold: Vec<i64>,
    ks: Vec<u32>,
    rules: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let rules = parse_rules(rules)?;
    let s = core::ranking::rank_scores(&items(pred), &items(gold), &ks, rules);
    scores_dict(py, &s)
}

/// The owners of a file's definitions (see `ctxeval/_core.pyi`): -1 for no function.
#[pyfunction]
fn definition_owners(spans: Vec<(u64, u64)>, functions: Vec<bool>) -> (Vec<i64>, Vec<i64>) {
    let (module, function) = core::ranking::definition_owners(&spans, &functions);
    (
        module.into_iter().map(|k| k as i64).collect(),
        function
            .into_iter()
            .map(|k| k.map_or(-1, |k| k as i64))
            .collect(),
    )
}

/// Score one instance (see `ctxeval/_core.pyi` for the input shape).
#[pyfunction]
#[pyo3(signature = (instance, preset="strict"))]
fn evaluate_instance<'py>(
    py: Python<'py>,
    instance: &Bound<'py, PyAny>,
    preset: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let preset = parse_preset(preset)?;
    let inst = self::instance(instance)?;
    let r = py.detach(|| core::evaluate(&inst, preset));
    result_dict(py, &Keys::new(py), &r)
}

/// Score many instances on `threads` worker threads (0: all cores) with the GIL released.
#[pyfunction]
#[pyo3(signature = (instances, preset="strict", threads=0))]
fn evaluate_batch<'py>(
    py: Python<'py>,
    instances: &Bound<'py, PyAny>,
    preset: &str,
    threads: usize,
) -> PyResult<Bound<'py, PyList>> {
    let preset = parse_preset(preset)?;
    let mut parsed = Vec::new();
    for (k, item) in instances.try_iter()?.enumerate() {
        parsed.push(
            self::instance(&item?)
                .map_err(|e| PyValueError::new_err(format!("instances[{k}]: {}", e.value(py))))?,
        );
    }
    let results = py.detach(|| core::evaluate_batch(&parsed, preset, threads));
    let keys = Keys::new(py);
    let out = PyList::empty(py);
    for r in &results {
        out.append(result_dict(py, &keys, r)?)?;
    }
    Ok(out)
}

/// Coverage, precision and F1 from counts, with a preset's empty-set conventions (used for
/// micro averages, so that aggregation shares the engine's conventions).
#[pyfunction]
#[pyo3(signature = (intersection, gold_size, pred_size, preset="strict"))]
fn score<'py>(
    py: Python<'py>,
    intersection: i64,
    gold_size: i64,
    pred_size: i64,
    preset: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let s = parse_preset(preset)?
        .empty_sets()
        .score(intersection, gold_size, pred_size);
    score_dict(py, &s, "coverage")
}

type Pairs<T> = Vec<(T, T)>;

/// Normalise inclusive line ranges: swap reversed, drop lines below 1, merge overlapping and
/// adjacent ones.
#[pyfunction]
fn lines_normalize(ranges: Pairs<u32>) -> Pairs<u32> {
    core::LineRanges::from_inclusive(ranges)
        .inclusive()
        .collect()
}

/// The inclusive line ranges covering a list of line numbers (consecutive lines joined).
#[pyfunction]
fn lines_from_numbers(lines: Vec<u32>) -> Pairs<u32> {
    core::LineRanges::from_inclusive(lines.into_iter().map(|l| (l, l)))
        .inclusive()
        .collect()
}

/// A binary set operation over line or byte ranges, as a Python function.
macro_rules! set_op {
    ($name:ident, $doc:literal, $coord:ty, $build:path, $op:ident, $out:ident) => {
        #[doc = $doc]
        #[pyfunction]
        fn $name(a: Pairs<$coord>, b: Pairs<$coord>) -> Pairs<$coord> {
            let (a, b) = ($build(a), $build(b));
            $out(&a.$op(&b))
        }
    };
}

fn inclusive(r: &core::LineRanges) -> Pairs<u32> {
    r.inclusive().collect()
}

fn half_open(r: &core::ByteRanges) -> Pairs<u64> {
    r.spans().to_vec()
}

set_op!(
    lines_union,
    "Union of inclusive line ranges.",
    u32,
    core::LineRanges::from_inclusive,
    union,
    inclusive
);
set_op!(
    lines_intersection,
    "Intersection of inclusive line ranges.",
    u32,
    core::LineRanges::from_inclusive,
    intersection,
    inclusive
);
set_op!(
    lines_difference,
    "Lines of `a` not in `b`.",
    u32,
    core::LineRanges::from_inclusive,
    difference,
    inclusive
);
set_op!(
    bytes_union,
    "Union of half-open byte ranges.",
    u64,
    core::ByteRanges::from_ranges,
    union,
    half_open
);
set_op!(
    bytes_intersection,
    "Intersection of half-open byte ranges.",
    u64,
    core::ByteRanges::from_ranges,
    intersection,
    half_open
);
set_op!(
    bytes_difference,
    "Bytes of `a` not in `b`.",
    u64,
    core::ByteRanges::from_ranges,
    difference,
    half_open
);

/// Merge inclusive line pairs as the ContextBench reference does: sorted, overlapping or
/// adjacent pairs joined, reversed pairs kept as given (for the `contextbench` preset).
#[pyfunction]
fn lines_merge_raw(ranges: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    core::rawlines::merge(&ranges)
}

/// Number of distinct lines covered by inclusive line ranges.
#[pyfunction]
fn lines_measure(ranges: Pairs<u32>) -> u64 {
    core::LineRanges::from_inclusive(ranges).measure()
}

/// Normalise half-open byte ranges: swap reversed, drop empty, merge overlapping and adjacent.
#[pyfunction]
fn bytes_normalize(ranges: Pairs<u64>) -> Pairs<u64> {
    half_open(&core::ByteRanges::from_ranges(ranges))
}

/// Number of distinct bytes covered by half-open byte ranges.
#[pyfunction]
fn bytes_measure(ranges: Pairs<u64>) -> u64 {
    core::ByteRanges::from_ranges(ranges).measure()
}

/// An edit as Python sees it: `(start_byte, old_end_byte, new_end_byte, start_point,
/// old_end_point, new_end_point)`, points as `(row, column)`.
type EditTuple = (u64, u64, u64, (u64, u64), (u64, u64), (u64, u64));

fn edit_tuple(e: &core::linediff::Edit) -> EditTuple {
    (
        e.start_byte,
        e.old_end_byte,
        e.new_end_byte,
        e.start_point,
        e.old_end_point,
        e.new_end_point,
    )
}

/// The line edits turning `old` into `new` (a minimal line diff), each stated in the
/// coordinates left by the ones before it, as `Tree.edit` takes them.
#[pyfunction]
fn line_edits(old: &[u8], new: &[u8]) -> Vec<EditTuple> {
    core::linediff::line_edits(old, new)
        .iter()
        .map(edit_tuple)
        .collect()
}

/// `line_edits(old, new)`, or None when the edits would remove and insert more than
/// `max_changed` bytes or be more than `max_edits` edits (decided early where it can be).
#[pyfunction]
fn line_edits_within(
    old: &[u8],
    new: &[u8],
    max_changed: u64,
    max_edits: usize,
) -> Option<Vec<EditTuple>> {
    core::linediff::line_edits_within(old, new, max_changed, max_edits)
        .map(|edits| edits.iter().map(edit_tuple).collect())
}

/// For each old definition `(start_byte, end_byte, start_line, end_line)`: its place in the
/// new version when neither `edits` nor the `changed` byte ranges (new coordinates) touch it,
/// else None.
#[pyfunction]
fn carry_over(
    defs: Vec<(u64, u64, u64, u64)>,
    edits: Vec<EditTuple>,
    changed: Vec<(u64, u64)>,
) -> Vec<Option<(u64, u64, u64, u64)>> {
    let spans: Vec<core::linediff::Span> = defs
        .into_iter()
        .map(|(a, b, c, d)| core::linediff::Span {
            start_byte: a,
            end_byte: b,
            start_line: c,
            end_line: d,
        })
        .collect();
    let edits: Vec<core::linediff::Edit> = edits
        .into_iter()
        .map(|(a, b, c, p, q, r)| core::linediff::Edit {
            start_byte: a,
            old_end_byte: b,
            new_end_byte: c,
            start_point: p,
            old_end_point: q,
            new_end_point: r,
        })
        .collect();
    core::linediff::carry_over(&spans, &edits, &changed)
        .into_iter()
        .map(|o| o.map(|m| (m.start_byte, m.end_byte, m.start_line, m.end_line)))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Definitions: tree-sitter extraction on native threads.

type DefinitionTuple = (String, String, String, u64, u64, u64, u64);

fn definition_tuples(defs: Vec<core::definitions::Definition>) -> Vec<DefinitionTuple> {
    defs.into_iter()
        .map(|d| {
            (
                d.kind,
                d.name,
                d.qualified_name,
                d.start_line,
                d.end_line,
                d.start_byte,
                d.end_byte,
            )
        })
        .collect()
}

/// Definitions of file versions: grammars registered once, parsing and naming in native code
/// with the GIL released, the versions of one path re-parsed from one another, different paths
/// on different threads (see `ctxeval.definitions`).
#[pyclass(frozen, name = "DefinitionExtractor", module = "ctxeval._core")]
struct PyDefinitionExtractor {
    inner: core::definitions::extractor::Extractor,
}

/// `(kinds, extras)` of a grammar, as `ctxeval.truth.node_types.resolved` gives them: each
/// named kind with the named kinds its children may have, and the kinds that may be anywhere.
type NodeKinds = (Vec<(String, Vec<String>)>, Vec<String>);

#[pymethods]
impl PyDefinitionExtractor {
    /// `tree_bytes`: source bytes whose trees are kept for incremental re-parsing (None: parse
    /// every version from scratch); `scratch_fraction`
    /// and `scratch_edits`: a version pair whose line diff changes more than that share of the
    /// new version's bytes, or is more edits, is parsed from scratch.
    #[new]
    #[pyo3(signature = (tree_bytes=None, scratch_fraction=None, scratch_edits=None))]
    fn new(
        tree_bytes: Option<usize>,
        scratch_fraction: Option<f64>,
        scratch_edits: Option<usize>,
    ) -> Self {
        let d = core::definitions::incremental::DEFAULT_LIMITS;
        let limits = core::definitions::incremental::Limits {
            scratch_fraction: scratch_fraction.unwrap_or(d.scratch_fraction),
            scratch_edits: scratch_edits.unwrap_or(d.scratch_edits),
        };
        Self {
            inner: core::definitions::extractor::Extractor::new(tree_bytes, limits),
        }
    }

    /// Registers a language: `language` is a grammar package's `language()` capsule, kept
    /// alive by its module; `presets` are `(name, query source, heuristic naming, node types
    /// that may depend on their parent)`; `node_types` are `(kinds, extras)`: each named kind
    /// with the named kinds its children may have, and the kinds that may be in any node (a
    /// walk then skips the subtrees no definition can be in; see
    /// `ctxeval.truth.node_types`). A query that does not compile is a ValueError.
    #[pyo3(signature = (name, language, presets, node_types=None))]
    fn add_grammar(
        &self,
        name: &str,
        language: &Bound<'_, pyo3::types::PyCapsule>,
        presets: Vec<(String, String, bool, Vec<String>)>,
        node_types: Option<NodeKinds>,
    ) -> PyResult<()> {
        use pyo3::types::PyCapsuleMethods;
        let ptr = language.pointer_checked(Some(c"tree_sitter.Language"))?;
        // SAFETY: the capsule holds a `const TSLanguage *` with static lifetime (a grammar
        // package's parse tables); `Language` is a transparent wrapper of that pointer, and
        // `ts_language_copy` takes the reference its drop gives back.
        let language: tree_sitter::Language = unsafe {
            let raw = tree_sitter::ffi::ts_language_copy(ptr.as_ptr() as *const _);
            std::mem::transmute::<*const tree_sitter::ffi::TSLanguage, tree_sitter::Language>(raw)
        };
        let version = language.abi_version();
        if !(tree_sitter::MIN_COMPATIBLE_LANGUAGE_VERSION..=tree_sitter::LANGUAGE_VERSION)
            .contains(&version)
        {
            return Err(PyValueError::new_err(format!(
                "grammar {name}: ABI version {version} is not supported by tree-sitter {}-{}",
                tree_sitter::MIN_COMPATIBLE_LANGUAGE_VERSION,
                tree_sitter::LANGUAGE_VERSION
            )));
        }
        let mut grammar = core::definitions::Grammar::new(language);
        for (preset, source, heuristic, dependent) in presets {
            let naming = if heuristic {
                core::definitions::Naming::Heuristic
            } else {
                core::definitions::Naming::Own
            };
            grammar
                .add_preset(&preset, &source, naming, dependent)
                .map_err(|e| PyValueError::new_err(format!("grammar {name}: {e}")))?;
        }
        if let Some((kinds, extras)) = node_types {
            grammar.set_node_types(core::definitions::NodeTypes { kinds, extras });
        }
        self.inner.add_grammar(name, grammar);
        Ok(())
    }

    /// Whether walks of `lang` under `preset` skip the subtrees no definition can be in (the
    /// node types given were this grammar's).
    fn prunes(&self, lang: &str, preset: &str) -> bool {
        self.inner.prunes(lang, preset)
    }

    fn has_grammar(&self, name: &str) -> bool {
        self.inner.has_grammar(name)
    }

    /// Whether whole trees of `lang` under `preset` are searched by a walk that compares node
    /// kinds (every pattern's root kind is known) rather than by running the query everywhere.
    fn walks(&self, lang: &str, preset: &str) -> bool {
        self.inner.walks(lang, preset)
    }

    /// The definitions of one version as `(kind, name, qualified_name, start_line, end_line,
    /// start_byte, end_byte)` tuples sorted by bytes; None when the language is not
    /// registered or the parse failed. `key` names the path: a later version of the same key is
    /// re-parsed from this one's tree.
    fn extract(
        &self,
        py: Python<'_>,
        lang: &str,
        preset: &str,
        key: &str,
        data: &[u8],
    ) -> Option<Vec<DefinitionTuple>> {
        let item = core::definitions::extractor::Item {
            lang,
            preset,
            key,
            data,
        };
        py.detach(|| self.inner.extract(&item))
            .ok()
            .map(definition_tuples)
    }

    /// `extract` of many `(lang, preset, key, data)` versions, in that order, on `threads`
    /// threads; the versions of one key are taken in order. The bytes are read in place.
    #[pyo3(signature = (items, threads=1))]
    fn extract_many(
        &self,
        py: Python<'_>,
        items: Vec<(String, String, String, Bound<'_, pyo3::types::PyBytes>)>,
        threads: usize,
    ) -> Vec<Option<Vec<DefinitionTuple>>> {
        use pyo3::types::PyBytesMethods;
        let refs: Vec<core::definitions::extractor::Item> = items
            .iter()
            .map(
                |(lang, preset, key, data)| core::definitions::extractor::Item {
                    lang,
                    preset,
                    key,
                    data: data.as_bytes(),
                },
            )
            .collect();
        let got = py.detach(|| self.inner.extract_many(&refs, threads));
        got.into_iter()
            .map(|r| r.ok().map(definition_tuples))
            .collect()
    }

    /// Counts so far: versions `parsed`, of them `incremental` (re-parsed from an earlier
    /// version's tree), definitions `reused`, changed ranges `queried`; and the source bytes of
    /// the trees kept (`kept_bytes`).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        use std::sync::atomic::Ordering::Relaxed;
        let c = &self.inner.counts;
        let out = PyDict::new(py);
        out.set_item("parsed", c.parsed.load(Relaxed))?;
        out.set_item("incremental", c.incremental.load(Relaxed))?;
        out.set_item("reused", c.reused.load(Relaxed))?;
        out.set_item("queried", c.queried.load(Relaxed))?;
        out.set_item("kept_bytes", self.inner.kept_bytes())?;
        Ok(out)
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Before anything is parsed: tree-sitter's nodes come from mimalloc from then on.
    core::definitions::use_mimalloc();
    m.add("__version__", core::version())?;
    m.add_class::<PyLineIndex>()?;
    m.add_class::<PyDefinitionExtractor>()?;
    m.add(
        "TREE_SITTER_LANGUAGE_VERSION",
        tree_sitter::LANGUAGE_VERSION,
    )?;
    m.add_function(wrap_pyfunction!(evaluate_instance, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_batch, m)?)?;
    m.add_function(wrap_pyfunction!(score, m)?)?;
    m.add_function(wrap_pyfunction!(rank_scores, m)?)?;
    m.add_function(wrap_pyfunction!(definition_owners, m)?)?;
    m.add_function(wrap_pyfunction!(lines_normalize, m)?)?;
    m.add_function(wrap_pyfunction!(lines_from_numbers, m)?)?;
    m.add_function(wrap_pyfunction!(lines_union, m)?)?;
    m.add_function(wrap_pyfunction!(lines_intersection, m)?)?;
    m.add_function(wrap_pyfunction!(lines_difference, m)?)?;
    m.add_function(wrap_pyfunction!(lines_measure, m)?)?;
    m.add_function(wrap_pyfunction!(lines_merge_raw, m)?)?;
    m.add_function(wrap_pyfunction!(bytes_normalize, m)?)?;
    m.add_function(wrap_pyfunction!(bytes_union, m)?)?;
    m.add_function(wrap_pyfunction!(bytes_intersection, m)?)?;
    m.add_function(wrap_pyfunction!(bytes_difference, m)?)?;
    m.add_function(wrap_pyfunction!(bytes_measure, m)?)?;
    m.add_function(wrap_pyfunction!(line_edits, m)?)?;
    m.add_function(wrap_pyfunction!(line_edits_within, m)?)?;
    m.add_function(wrap_pyfunction!(carry_over, m)?)?;
    stats::register(m)?;
    Ok(())
}
