//! The definitions of many file versions, on many threads: grammars registered once, a parser
//! per thread and language, and the last tree of each path kept for incremental re-parsing.
//!
//! Versions of one path are taken in the order given (commit order), each re-parsed from the
//! tree of the one before; different paths go to different threads. The kept trees are bounded
//! by the bytes of their sources (a tree takes about 35 times its source), least recently used
//! dropped first.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rayon::prelude::*;
use tree_sitter::{Parser, Tree};

use super::incremental::{self, Limits, Previous};
use super::{Definition, Grammar};

/// One file version to extract: its language (a registered grammar), preset, the key of its
/// path (versions of one key are re-parsed from one another) and its bytes.
pub struct Item<'a> {
    pub lang: &'a str,
    pub preset: &'a str,
    pub key: &'a str,
    pub data: &'a [u8],
}

/// The definitions of one version, or why it has none.
pub type Outcome = Result<Vec<Definition>, Failure>;

/// Why a version has no definitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No grammar of that name, or the grammar has no such preset.
    UnknownLanguage,
    /// Tree-sitter gave no tree, or the naming failed: the file has no definitions rather than
    /// failing the run.
    ParseFailed,
}

struct Kept {
    source: Vec<u8>,
    tree: Tree,
    preset: String,
    defs: Vec<Definition>,
    stamp: u64,
}

/// The last tree of each path, bounded by source bytes, least recently used dropped first.
struct Trees {
    by_key: HashMap<String, Kept>,
    by_stamp: BTreeMap<u64, String>,
    bytes: usize,
    budget: usize,
    clock: u64,
}

impl Trees {
    fn take(&mut self, key: &str) -> Option<Kept> {
        let kept = self.by_key.remove(key)?;
        self.by_stamp.remove(&kept.stamp);
        self.bytes -= kept.source.len();
        Some(kept)
    }

    /// Keeps `kept` as the last tree of `key`; returns what no longer fits (to be dropped by
    /// the caller outside the lock: freeing a tree costs about a tenth of parsing it).
    fn put(&mut self, key: &str, mut kept: Kept) -> Vec<Kept> {
        if kept.source.len() > self.budget {
            return vec![kept];
        }
        let mut dropped: Vec<Kept> = self.take(key).into_iter().collect(); // put meanwhile
        self.clock += 1;
        kept.stamp = self.clock;
        self.bytes += kept.source.len();
        self.by_stamp.insert(kept.stamp, key.to_owned());
        self.by_key.insert(key.to_owned(), kept);
        while self.bytes > self.budget {
            let Some((_, oldest)) = self.by_stamp.pop_first() else {
                break;
            };
            if let Some(old) = self.by_key.remove(&oldest) {
                self.bytes -= old.source.len();
                dropped.push(old);
            }
        }
        dropped
    }
}

thread_local! {
    /// Parsers of this thread, by language (tree-sitter parsers are not shared).
    static PARSERS: RefCell<HashMap<tree_sitter::Language, Parser>> = RefCell::new(HashMap::new());
}

/// Counts of how definitions were found.
#[derive(Default)]
pub struct Counts {
    /// Versions parsed (from scratch or incrementally).
    pub parsed: AtomicU64,
    /// Versions that had an earlier version's tree to start from.
    pub incremental: AtomicU64,
    /// Definitions carried over instead of found again.
    pub reused: AtomicU64,
    /// Changed byte ranges queried.
    pub queried: AtomicU64,
}

pub struct Extractor {
    grammars: RwLock<HashMap<String, Arc<Grammar>>>,
    trees: Option<Mutex<Trees>>,
    limits: Limits,
    /// Thread pools of [`Self::extract_many`], by size, made on first use.
    pools: Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>,
    pub counts: Counts,
}

impl Extractor {
    /// `tree_bytes`: source bytes whose trees are kept for incremental re-parsing (`None`: no
    /// incremental re-parsing).
    pub fn new(tree_bytes: Option<usize>, limits: Limits) -> Self {
        Self {
            grammars: RwLock::new(HashMap::new()),
            trees: tree_bytes.map(|budget| {
                Mutex::new(Trees {
                    by_key: HashMap::new(),
                    by_stamp: BTreeMap::new(),
                    bytes: 0,
                    budget,
                    clock: 0,
                })
            }),
            limits,
            pools: Mutex::new(HashMap::new()),
            counts: Counts::default(),
        }
    }

    pub fn add_grammar(&self, name: &str, grammar: Grammar) {
        self.grammars
            .write()
            .expect("grammar table")
            .insert(name.to_owned(), Arc::new(grammar));
    }

    /// Whether `lang`'s `preset` searches whole trees by a walk (see [`Grammar::walks`]).
    pub fn walks(&self, lang: &str, preset: &str) -> bool {
        self.grammars
            .read()
            .expect("grammar table")
            .get(lang)
            .is_some_and(|g| g.walks(preset))
    }

    /// Whether `lang`'s `preset` walk skips the subtrees no definition can be in (see
    /// [`Grammar::set_node_types`]).
    pub fn prunes(&self, lang: &str, preset: &str) -> bool {
        self.grammars
            .read()
            .expect("grammar table")
            .get(lang)
            .is_some_and(|g| g.prunes(preset))
    }

    pub fn has_grammar(&self, name: &str) -> bool {
        self.grammars
            .read()
            .expect("grammar table")
            .contains_key(name)
    }

    /// Source bytes of the trees kept now.
    pub fn kept_bytes(&self) -> usize {
        self.trees
            .as_ref()
            .map_or(0, |t| t.lock().expect("tree cache").bytes)
    }

    /// The definitions of one version (sorted by start byte, end byte).
    pub fn extract(&self, item: &Item) -> Outcome {
        let grammar = self
            .grammars
            .read()
            .expect("grammar table")
            .get(item.lang)
            .cloned()
            .ok_or(Failure::UnknownLanguage)?;
        if grammar.preset(item.preset).is_none() {
            return Err(Failure::UnknownLanguage);
        }
        PARSERS.with(|cell| {
            let mut parsers = cell.borrow_mut();
            let parser = parsers
                .entry(grammar.language.clone())
                .or_insert_with(|| grammar.parser());
            self.extract_with(&grammar, parser, item)
        })
    }

    fn extract_with(&self, grammar: &Grammar, parser: &mut Parser, item: &Item) -> Outcome {
        let previous = self
            .trees
            .as_ref()
            .and_then(|t| t.lock().expect("tree cache").take(item.key));
        let got = catch_unwind(AssertUnwindSafe(|| {
            let prev = previous.as_ref().map(|k| Previous {
                source: &k.source,
                tree: &k.tree,
                defs: (k.preset == item.preset).then_some(k.defs.as_slice()),
            });
            incremental::extract(grammar, parser, item.data, item.preset, prev, self.limits)
        }));
        let Ok(Some(got)) = got else {
            // A parse cut short leaves the parser mid-document: start the next one clean.
            parser.reset();
            return Err(Failure::ParseFailed);
        };
        self.counts.parsed.fetch_add(1, Ordering::Relaxed);
        if previous.is_some() {
            self.counts.incremental.fetch_add(1, Ordering::Relaxed);
        }
        self.counts
            .reused
            .fetch_add(got.reused as u64, Ordering::Relaxed);
        self.counts
            .queried
            .fetch_add(got.queried as u64, Ordering::Relaxed);
        if let Some(trees) = &self.trees {
            let kept = Kept {
                source: item.data.to_vec(),
                tree: got.tree,
                preset: item.preset.to_owned(),
                defs: got.defs.clone(),
                stamp: 0,
            };
            let dropped = trees.lock().expect("tree cache").put(item.key, kept);
            drop(dropped); // outside the lock
        }
        Ok(got.defs)
    }

    fn pool(&self, threads: usize) -> Arc<rayon::ThreadPool> {
        let mut pools = self.pools.lock().expect("thread pools");
        pools
            .entry(threads)
            .or_insert_with(|| {
                Arc::new(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .thread_name(|i| format!("ctxeval-extract-{i}"))
                        .build()
                        .expect("extraction threads"),
                )
            })
            .clone()
    }

    /// The definitions of many versions, in the order given, on `threads` threads. Versions of
    /// one key are taken in order on one thread; keys are spread over the threads, largest
    /// first.
    pub fn extract_many(&self, items: &[Item], threads: usize) -> Vec<Outcome> {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut by_key: HashMap<&str, usize> = HashMap::new();
        for (i, item) in items.iter().enumerate() {
            let g = *by_key.entry(item.key).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(i);
        }
        let size = |g: &Vec<usize>| g.iter().map(|&i| items[i].data.len()).sum::<usize>();
        if threads > 1 {
            groups = split_long_chains(groups, threads, &|i| items[i].data.len());
        }
        groups.sort_by_key(|g| std::cmp::Reverse(size(g)));
        let run = |g: &Vec<usize>| -> Vec<(usize, Outcome)> {
            g.iter().map(|&i| (i, self.extract(&items[i]))).collect()
        };
        let done: Vec<Vec<(usize, Outcome)>> = if threads <= 1 || groups.len() <= 1 {
            groups.iter().map(run).collect()
        } else {
            let pool = self.pool(threads);
            pool.install(|| groups.par_iter().with_max_len(1).map(run).collect())
        };
        let mut out: Vec<Option<Outcome>> = (0..items.len()).map(|_| None).collect();
        for (i, r) in done.into_iter().flatten() {
            out[i] = Some(r);
        }
        out.into_iter()
            .map(|r| r.expect("every item extracted"))
            .collect()
    }
}

/// Groups no larger than a thread's share of the bytes: a path whose versions are more than
/// that (one large file met at many commits) would keep one thread busy after the others are
/// done, so its chain is cut into consecutive parts of about a share each. Each part's first
/// version is re-parsed from whatever tree of the path is kept by then, or from scratch: the
/// definitions are the same either way, only the work differs.
fn split_long_chains(
    groups: Vec<Vec<usize>>,
    threads: usize,
    item_size: &dyn Fn(usize) -> usize,
) -> Vec<Vec<usize>> {
    let size = |g: &Vec<usize>| g.iter().map(|&i| item_size(i)).sum::<usize>();
    let total: usize = groups.iter().map(size).sum();
    let share = total.div_ceil(threads).max(1);
    let mut out = Vec::with_capacity(groups.len());
    for g in groups {
        if g.len() < 2 || size(&g) <= share {
            out.push(g);
            continue;
        }
        let mut part: Vec<usize> = Vec::new();
        let mut bytes = 0;
        for i in g {
            let n = item_size(i);
            if !part.is_empty() && bytes + n > share {
                out.push(std::mem::take(&mut part));
                bytes = 0;
            }
            part.push(i);
            bytes += n;
        }
        out.push(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::python;
    use super::*;

    fn item<'a>(key: &'a str, data: &'a [u8]) -> Item<'a> {
        Item {
            lang: "python",
            preset: "strict",
            key,
            data,
        }
    }

    #[test]
    fn many_versions_on_threads_match_one_by_one() {
        let versions: Vec<Vec<u8>> = (0..12)
            .map(|k| {
                let mut s = String::new();
                for i in 0..k + 3 {
                    s.push_str(&format!("def f{i}(x):\n    return x + {i}\n\n"));
                }
                s.into_bytes()
            })
            .collect();
        let items: Vec<Item> = versions
            .iter()
            .enumerate()
            .map(|(k, v)| item(if k % 3 == 0 { "a.py" } else { "b.py" }, v))
            .collect();
        let threaded = Extractor::new(Some(1 << 20), incremental::DEFAULT_LIMITS);
        threaded.add_grammar("python", python());
        let single = Extractor::new(None, incremental::DEFAULT_LIMITS);
        single.add_grammar("python", python());
        let got = threaded.extract_many(&items, 3);
        for (it, g) in items.iter().zip(&got) {
            assert_eq!(g.as_ref().unwrap(), &single.extract(it).unwrap());
        }
        assert_eq!(threaded.counts.parsed.load(Ordering::Relaxed), 12);
        // 10 versions have an earlier one; a long chain cut in parts may start a part before
        // the tree it would start from is there (then from scratch: the same definitions).
        let incremental = threaded.counts.incremental.load(Ordering::Relaxed);
        assert!((7..=10).contains(&incremental), "{incremental}");
        assert!(threaded.counts.reused.load(Ordering::Relaxed) > 0);
    }

    #[test]
    fn long_chains_are_cut_into_shares() {
        let sizes = [50usize, 30, 30, 30, 30, 10, 10];
        let size = |i: usize| sizes[i];
        // One path with versions 0-4 (170 bytes), one with 5-6 (20): share 95 of 190.
        let got = split_long_chains(vec![vec![0, 1, 2, 3, 4], vec![5, 6]], 2, &size);
        assert_eq!(got, vec![vec![0, 1], vec![2, 3, 4], vec![5, 6]]);
        // Order kept, nothing lost, and a chain within its share is left whole.
        let got = split_long_chains(vec![vec![5, 6], vec![0]], 2, &size);
        assert_eq!(got, vec![vec![5, 6], vec![0]]);
    }

    #[test]
    fn unknown_languages_and_presets() {
        let x = Extractor::new(None, incremental::DEFAULT_LIMITS);
        x.add_grammar("python", python());
        let mut it = item("a.py", b"def f(): pass\n");
        it.lang = "cobol";
        assert_eq!(x.extract(&it), Err(Failure::UnknownLanguage));
        it.lang = "python";
        it.preset = "nope";
        assert_eq!(x.extract(&it), Err(Failure::UnknownLanguage));
    }

    #[test]
    fn kept_trees_stay_within_their_budget() {
        let x = Extractor::new(Some(100), incremental::DEFAULT_LIMITS);
        x.add_grammar("python", python());
        let big = vec![b'#'; 150];
        x.extract(&item("big.py", &big)).unwrap();
        assert_eq!(x.kept_bytes(), 0);
        x.extract(&item("a.py", &[b'#'; 60])).unwrap();
        x.extract(&item("b.py", &[b'#'; 60])).unwrap();
        assert_eq!(x.kept_bytes(), 60);
    }
}
