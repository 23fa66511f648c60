"""Measure ``ctxeval.reading.placing`` on real trajectories against line numbers obtained by
re-running.

Usage::

    python benchmarks/adapter_accuracy/placing.py MANIFEST [--json OUT] [--details]

What is measured. Shell outputs that print a file's lines without their numbers (``grep``
without ``-n``, ``sed -n '/a/,/b/p'``, the tail of a truncated ``cat``) are kept by the shell
reader as text views (``View.text``); :func:`ctxeval.reading.placing.place_view` places them in the
file at the base commit. For every such view the placed lines are compared with the true lines:
precision = correct / placed, recall = correct / truth (truth = the lines the view's text really
is; a chunk ``placing`` leaves unplaced because it is ambiguous costs recall, never precision).

How the truth is built, independently of ``placing``. Each command is re-run with ``bash -c`` in
a checkout of the repository at the base commit (the agent's working directory, ``/testbed`` by
default, mapped onto it), once as written and once rewritten to print line numbers:

- ``grep …`` → ``grep -n …`` (its first ``grep``); ``sed -n '/a/,/b/p'`` → ``sed -n
  '/a/,/b/{=;p}'``; a trailing ``| head -N`` is dropped and the recorded output compared with
  the re-run's first lines;
- a single-file line-position filter (``sed -n 'A,Bp' f``, ``'A,$p'``, ``head``/``tail -n N``,
  ``-N``, ``+N``) → ``cat -n f | <the same filter>``;
- a truncated single-file ``cat f`` or line-position filter (``<output_head>``/``<output_tail>``)
  → its numbered variant: the true lines are those printed, wholly or in part, in the recorded
  tail of the full output (issue 12: the line the tail starts inside was shown).

The unnumbered re-run must reproduce the recorded output of the view's file (else the view is
skipped, "not reproducible": the environment differed), and the numbered re-run must print the
same text (else "numbered variant disagrees"). The view's text is then aligned, in order, onto
the numbered lines printed for its file; the numbers it lands on are the truth. A view whose
text differs from what was printed is listed as a misreading (a reader fault, not placing's).

What is skipped, and why (counted by reason in the output):

- post-edit views, and views of a file an earlier step edited: their text is not the base file's;
- files not in the checkout (created by the agent, build artefacts);
- "unsafe" commands: the commands come from public trajectories, so anything that may write or
  run code is never executed — ``rm``, ``mv``, ``cp``, ``sed -i``, ``tee``, ``git`` other than
  ``git grep``, ``pip``, ``python``, ``curl``, ``wget``, ``chmod`` (and a few more of the kind),
  any redirection ``>``/``>>`` other than into ``/dev/null`` or a descriptor;
- commands with no numbered variant, truncated outputs other than a single-file ``cat``,
  re-runs that time out, steps whose observation cannot be found.

Observations are read from the trajectory JSON (mini-swe-agent, both message formats): the
message answering each executed action, matched to the adapter's steps in order.

Reproduce:

1. Fetch each trajectory's repository (``git clone https://github.com/<owner>/<name>``).
2. Make a checkout at the instance's base commit (from the SWE-bench record), without ``.git``
   so that nothing the agent did not see is searched::

       mkdir -p repos/<instance_id>
       git -C <clone> archive <base_commit> | tar -x -C repos/<instance_id>

3. Write the manifest, a JSON list (paths may be relative to the manifest's directory)::

       [{"instance_id": "psf__requests-2317",
         "trajectory": "trajs/mini-swe-agent_1.15.0_gemini3pro.traj.json",
         "checkout": "repos/psf__requests-2317"}]

   Optional keys: ``format`` (adapter name, detected when absent) and ``cwd`` (the agent's
   working directory, ``/testbed`` when absent).
4. ``python benchmarks/adapter_accuracy/placing.py manifest.json --details``.
"""

from __future__ import annotations

import argparse
import json
import posixpath
import re
import shlex
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxeval.model import Step, View
from ctxeval.reading import adapters
from ctxeval.reading.placing import FileLines, place_view
from ctxeval.reading.shell import split_commands

DEFAULT_CWD = "/testbed"
TIMEOUT = 60  # seconds per re-run; a recursive grep over a big repository takes a few
MINI = "mini-swe-agent"

Printed = list[tuple[int | None, str]]  # (line number if printed, text) of one file's lines


# --- manifest --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One trajectory to measure, with the checkout of its base commit."""

    instance_id: str
    trajectory: Path
    checkout: Path
    fmt: str | None = None
    cwd: str = DEFAULT_CWD

    @property
    def name(self) -> str:
        return f"{self.instance_id}/{self.trajectory.name}"


def load_manifest(path: Path) -> list[Job]:
    """The jobs of a manifest; relative paths are taken from the manifest's directory."""
    base = path.resolve().parent
    jobs = []
    for entry in json.loads(path.read_text(encoding="utf-8")):
        jobs.append(Job(entry["instance_id"], base / entry["trajectory"],
                        base / entry["checkout"], entry.get("format"),
                        entry.get("cwd", DEFAULT_CWD)))
    return jobs


# --- observations, read from the trajectory JSON ---------------------------------------------


def text_of(content: Any) -> str:
    """Message content as text (a string, or the text parts of a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p if isinstance(p, str) else p.get("text", "")
                         for p in content if isinstance(p, str | dict))
    return ""


def call_command(call: dict[str, Any]) -> str | None:
    """The ``command`` argument of a ``bash`` tool call."""
    fn = call.get("function")
    args = fn.get("arguments") if isinstance(fn, dict) else None
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return None
    return args.get("command") if isinstance(args, dict) else None


ACTION_RE = r"```bash\s*\n(.*?)\n```"  # mini-swe-agent's default action_regex


def exchanges(messages: list[dict[str, Any]], action_re: str = ACTION_RE
              ) -> list[tuple[str, str, bool]]:
    """(action text, observation, exact) of every answered action, in order.

    Tool-call format: the call's command and the ``tool`` message with its id (exact: the
    step's action is that command). Text format: the assistant message and the next message;
    exact when the message holds exactly one action block (the step's action is that block),
    and dropped when it holds several: mini-swe-agent rejected it ("format error") and ran
    nothing, and its blocks must not capture a later step's observation. A message whose
    blocks the regex cannot find is kept, not exact (substring match, as before).
    """
    try:
        action = re.compile(action_re, re.S)
    except re.error:
        action = re.compile(ACTION_RE, re.S)
    by_id = {m["tool_call_id"]: text_of(m.get("content")) for m in messages
             if m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str)}
    out = []
    for i, msg in enumerate(messages):
        if msg.get("role") != "assistant":
            continue
        calls = [c for c in msg.get("tool_calls") or [] if isinstance(c, dict)]
        for call in calls:
            command = call_command(call)
            if command is not None and call.get("id") in by_id:
                out.append((command, by_id[call["id"]], True))
        reply = messages[i + 1] if i + 1 < len(messages) else None
        if not calls and reply is not None and reply.get("role") == "user":
            text = text_of(msg.get("content"))
            blocks = [b.strip() for b in action.findall(text)]
            if len(blocks) == 1:
                out.append((blocks[0], text_of(reply.get("content")), True))
            elif not blocks:
                out.append((text, text_of(reply.get("content")), False))
    return out


def observations(path: Path, steps: list[Step]) -> dict[int, str]:
    """Observation text of each bash step, by step index (steps matched to actions in order).

    Reading the JSON beside the adapter's steps keeps the adapter untouched: the step's action
    must equal the recorded command (or sit in the assistant message), so a mismatch leaves the
    step without an observation instead of pairing it wrongly.
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    agent = config.get("agent") if isinstance(config.get("agent"), dict) else {}
    action_re = agent.get("action_regex")
    found = exchanges([m for m in data.get("messages", []) if isinstance(m, dict)],
                      action_re if isinstance(action_re, str) else ACTION_RE)
    out: dict[int, str] = {}
    j = 0
    for step in steps:
        if step.tool != "bash":
            continue
        k = j
        while k < len(found) and not (step.action == found[k][0] if found[k][2]
                                      else step.action in found[k][0]):
            k += 1
        if k < len(found):
            out[step.index] = found[k][1]
            j = k + 1
    return out


@dataclass
class Output:
    """What an observation showed: the whole output, or the head and tail of a cut one."""

    text: str
    head: str | None = None
    tail: str | None = None


_CUT_RE = re.compile(r"<output_head>\n?(.*?)\n?</output_head>\s*<elided_chars>.*?"
                     r"</elided_chars>\s*<output_tail>\n?(.*?)\n?</output_tail>", re.S)


def observation_output(obs: str) -> Output:
    """The output of a mini-swe-agent observation, split into head and tail when truncated."""
    cut = _CUT_RE.search(obs)
    if cut:
        return Output(obs, cut.group(1), cut.group(2))
    start = obs.find("<output>")
    if start < 0:
        return Output(obs)
    end = obs.rfind("</output>")
    body = obs[start + len("<output>"):end if end > start else None]
    return Output(body.removeprefix("\n"))


# --- safety ----------------------------------------------------------------------------------

FORBIDDEN = {"rm", "mv", "cp", "tee", "pip", "curl", "wget", "chmod", "chown", "dd", "ln",
             "touch", "mkdir", "truncate", "patch", "eval", "source", "."}
_INTERPRETER_RE = re.compile(r"(python|pip|perl|ruby|node)[\d.]*")
_RUNNERS = {"find", "xargs", "timeout", "env", "nohup", "nice", "time", "command", "exec",
            "stdbuf", "sudo"}
_SAFE_REDIRECT_RE = re.compile(r">(&\d|\s*/dev/null\b)")


def unsafe_head(argv: list[str]) -> bool:
    """Whether a simple command, read from its first word, may write or run code."""
    name = posixpath.basename(argv[0])
    if name in FORBIDDEN or _INTERPRETER_RE.fullmatch(name):
        return True
    if name == "sed":
        return any(a.startswith(("-i", "--in-place")) for a in argv[1:])
    if name == "git":
        return len(argv) < 2 or argv[1] != "grep"
    if name in ("bash", "sh", "zsh", "dash"):
        return len(argv) < 3 or argv[1] != "-c" or unsafe(argv[2])
    return name == "find" and any(a in ("-delete", "-fprint", "-fprintf", "-fls") for a in argv)


def unsafe_argv(argv: list[str]) -> bool:
    """``unsafe_head`` at the start, and at every word of a command that runs another one
    (``find -exec``, ``xargs``, ``timeout``): conservative, a refusal costs only a view."""
    if unsafe_head(argv):
        return True
    if posixpath.basename(argv[0]) in _RUNNERS:
        return any(unsafe_head(argv[k:]) for k in range(1, len(argv)))
    return False


def writes_file(command: str) -> bool:
    """Whether a ``>`` redirects into anything but ``/dev/null`` or a descriptor.

    A quoted ``>`` is a pattern's, unless the command substitutes commands (``"$(… > f)"``).
    """
    substitutes = "$(" in command or "`" in command
    quote = ""
    i = 0
    while i < len(command):
        ch = command[i]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == ">" and substitutes and not _SAFE_REDIRECT_RE.match(command, i):
                return True
            elif ch == "\\" and quote == '"':
                i += 1
        elif ch in "'\"":
            quote = ch
        elif ch == "\\":
            i += 1
        elif ch == ">" and not _SAFE_REDIRECT_RE.match(command, i):
            return True
        i += 1
    return False


def unsafe(command: str) -> bool:
    """Whether a command from a public trajectory must not be run in the checkout."""
    return writes_file(command) or any(unsafe_argv(a) for a in split_commands(command) if a)


def run(command: str, cwd: Path) -> str | None:
    """Stdout of ``bash -c command`` in ``cwd``, None when it times out."""
    try:
        done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                              errors="replace", timeout=TIMEOUT, stdin=subprocess.DEVNULL,
                              check=False)
    except subprocess.TimeoutExpired:
        return None
    return done.stdout


# --- rewriting commands to print line numbers ------------------------------------------------

GREP_RE = re.compile(r"(^|[|;&(]\s*|&&\s*)(grep)\b")
HEAD_RE = re.compile(r"\|\s*head\s+(?:-n\s*)?-?(\d+)\s*$")
SED_RE = re.compile(r"sed -n '(/[^']*/,/[^']*/)p'")
CD_RE = re.compile(r"^\s*cd\s+(\S+)\s*&&\s*")
CAT_NUMBERED_RE = re.compile(r"^\s*(\d+)\t(.*)$", re.S)


def lines_of(text: str) -> list[str]:
    """Lines of an output, without the empty string after a final newline."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def strip_head(command: str) -> tuple[str, int | None]:
    """The command without a trailing ``| head -N``, and N: the re-run prints everything."""
    m = HEAD_RE.search(command)
    if not m:
        return command, None
    return command[:m.start()].rstrip(), int(m.group(1))


LINE_FILTERS = ("sed", "head", "tail")


def line_filter(argv: list[str]) -> tuple[str, str] | None:
    """(filter without its file, file) of a single-file command that selects lines by position
    only: ``sed -n 'A,Bp' f`` (A, B numbers or ``$``), ``head``/``tail`` ``-n N``/``-N`` ``f``.

    Run on ``cat -n f`` the filter selects the same lines, now numbered; the re-run checks it.
    """
    name, args = argv[0], argv[1:]
    if len(args) < 2 or name not in LINE_FILTERS:
        return None
    file, opts = args[-1], args[:-1]
    if name == "sed":
        ok = (len(opts) == 2 and opts[0] == "-n"
              and re.fullmatch(r"\d+(,(\d+|\$))?p|\$p", opts[1]) is not None)
    else:
        count = r"[-+]?\d+" if len(opts) == 2 else r"-\d+|-n[-+]?\d+"
        ok = (opts in (["-n", opts[-1]], [opts[-1]])
              and re.fullmatch(count, opts[-1]) is not None)
    if not ok or file.startswith("-"):
        return None
    return " ".join(shlex.quote(a) for a in [name, *opts]), file


def numbered(command: str) -> tuple[str | None, str]:
    """(numbered variant, kind 'grep', 'sed' or 'catn') of a command, (None, '') when none."""
    argv = split_commands(command)
    found = line_filter(argv[0]) if len(argv) == 1 and argv[0] else None
    if found:
        return f"cat -n {shlex.quote(found[1])} | {found[0]}", "catn"
    if SED_RE.search(command) and not GREP_RE.search(command):
        return SED_RE.sub(lambda m: f"sed -n '{m.group(1)}{{=;p}}'", command, count=1), "sed"
    m = GREP_RE.search(command)
    if not m:
        return None, ""
    return command[:m.end()] + " -n" + command[m.end():], "grep"


def multi_file(command: str) -> bool:
    """Whether the first grep names its files in front of its lines (recursive, glob, -H)."""
    m = GREP_RE.search(command)
    if not m:
        return False
    args = command[m.end():].split("|")[0]
    return bool(re.search(r"(^|\s)-[a-zA-Z]*[rR]", args)) or "*" in args or " -H" in args


def split_prefixed(line: str, cwd: Path, with_number: bool
                   ) -> tuple[str, int | None, str] | None:
    """(path, number or None, text) of ``path:N:text`` / ``path-N-text`` / ``path:text``.

    The path is the first prefix that is a file of the checkout: paths and text may both hold
    ``:`` and ``-``, so the split cannot be read from the line alone.
    """
    if with_number:
        for m in re.finditer(r"(?=([:-])(\d+)\1)", line):
            pre = line[:m.start()]
            if pre and (cwd / pre).is_file():
                return pre, int(m.group(2)), line[m.start() + len(m.group(2)) + 2:]
        return None
    for i, ch in enumerate(line):
        if ch in ":-" and line[:i] and (cwd / line[:i]).is_file():
            return line[:i], None, line[i + 1:]
    return None


@dataclass(frozen=True)
class Layout:
    """How to attribute a grep/sed output's lines to files."""

    cwd: Path  # where the command ran, in the checkout
    agent_cwd: str  # the same directory as the agent named it
    multi: bool  # lines carry their file name
    single: str | None  # the one file of a single-file command


def parse_output(lines: list[str], layout: Layout, with_number: bool, kind: str
                 ) -> dict[str, Printed]:
    """Per agent file, its (number or None, text) lines in printed order."""
    per: dict[str, Printed] = {}
    if kind == "sed":  # '{=;p}' prints the number, then the line
        for k in range(0, len(lines) - 1, 2):
            per.setdefault(str(layout.single), []).append((int(lines[k]), lines[k + 1]))
        return per
    if kind == "catn" and with_number:  # 'cat -n f | filter': "   N\ttext"
        for ln in lines:
            m = CAT_NUMBERED_RE.match(ln)
            per.setdefault(str(layout.single) if m else "<unattributed>", []).append(
                (int(m.group(1)), m.group(2)) if m else (None, ln))
        return per
    if kind == "catn":  # the plain output of a single-file line filter: every line is the file's
        per[str(layout.single)] = [(None, ln) for ln in lines]
        return per
    for ln in lines:
        if ln == "--" or ln.startswith("Binary file") or re.match(r"^(grep|cat|sed): ", ln):
            continue
        file, entry = attribute(ln, layout, with_number)
        per.setdefault(file, []).append(entry)
    return per


def attribute(line: str, layout: Layout, with_number: bool
              ) -> tuple[str, tuple[int | None, str]]:
    """The file a printed line belongs to and its (number, text); ``<unattributed>`` if none."""
    if layout.multi:
        found = split_prefixed(line, layout.cwd, with_number)
        if found is None:
            return "<unattributed>", (None, line)
        rel, n, text = found
        return posixpath.normpath(posixpath.join(layout.agent_cwd, rel)), (n, text)
    if with_number:
        m = re.match(r"^(\d+)([:-])", line)
        if not m:
            return "<unattributed>", (None, line)
        return str(layout.single), (int(m.group(1)), line[m.end():])
    return str(layout.single), (None, line)


# --- the truth of one step -------------------------------------------------------------------


@dataclass
class FileTruth:
    """One file's printed lines: the recorded texts, and the numbered lines shown of them."""

    recorded: list[str]
    shown: Printed
    head_limited: bool = False


StepTruth = dict[str, FileTruth | str]  # per agent file: its truth, or why it is skipped


def reproduce(step: Step, obs: str, job: Job) -> StepTruth | str:
    """Re-run a step's command as written and numbered; a skip reason when it cannot be."""
    if unsafe(step.action):
        return "unsafe"
    agent_cwd, body = job.cwd, step.action
    m = CD_RE.match(body)
    if m:
        agent_cwd = posixpath.normpath(posixpath.join(job.cwd, m.group(1)))
        body = body[m.end():]
    cwd = real_path(agent_cwd, job)
    if cwd is None or not cwd.is_dir():
        return "cwd not in the checkout"
    body = body.replace(job.cwd, str(job.checkout))
    output = observation_output(obs)
    files = sorted({v.file for v in step.views if v.text is not None})
    if output.tail is not None:
        return reproduce_cat_tail(body, output, cwd, files)
    return reproduce_filter(body, output.text, cwd, agent_cwd, step)


def real_path(agent_path: str, job: Job) -> Path | None:
    """Where an agent's path is in the checkout; None when it is outside the working tree."""
    if agent_path == job.cwd:
        return job.checkout
    if not agent_path.startswith(job.cwd + "/"):
        return None
    return job.checkout / agent_path[len(job.cwd) + 1:]


def reproduce_filter(body: str, recorded_text: str, cwd: Path, agent_cwd: str, step: Step
                     ) -> StepTruth | str:
    """grep / sed: the re-runs parsed per file and checked against the recorded output."""
    plain, head = strip_head(body)
    command, kind = numbered(plain)
    if command is None:
        return "no numbered variant for this command"
    multi = kind == "grep" and multi_file(plain)
    single = None
    if not multi:
        files = {v.file for v in step.views}
        if len(files) != 1:
            return "single-file command with several view files"
        single = files.pop()
    layout = Layout(cwd, agent_cwd, multi, single)
    rerun, rerun_numbered = run(plain, layout.cwd), run(command, layout.cwd)
    if rerun is None or rerun_numbered is None:
        return "re-run timed out"
    recorded_lines = lines_of(recorded_text)
    plain_kind = "catn" if kind == "catn" else "grep"
    recorded = parse_output(recorded_lines, layout, False, plain_kind)
    original = parse_output(lines_of(rerun), layout, False, plain_kind)
    with_numbers = parse_output(lines_of(rerun_numbered), layout, True, kind)
    limited = head is not None and len(recorded_lines) >= head
    return {file: file_truth([t for _, t in recorded.get(file, [])],
                             [t for _, t in original.get(file, [])],
                             with_numbers.get(file, []), limited)
            for file in {v.file for v in step.views if v.text is not None}}


def file_truth(recorded: list[str], original: list[str], with_numbers: Printed, limited: bool
               ) -> FileTruth | str:
    """The numbered lines shown for one file, once both re-runs are checked."""
    same = original[:len(recorded)] == recorded if limited else original == recorded
    if not same:
        return "not reproducible"
    if [t for _, t in with_numbers] != original:
        return "numbered variant disagrees with original"
    return FileTruth(recorded, with_numbers[:len(recorded)], limited)


def reproduce_cat_tail(body: str, output: Output, cwd: Path, files: list[str]
                       ) -> StepTruth | str:
    """A truncated ``cat f`` or line filter (``sed -n 'A,$p' f``, ``head``/``tail -n N f``):
    the lines printed, wholly or in part, in the recorded tail of the full output."""
    argv = split_commands(body)
    if len(argv) != 1 or len(files) != 1 or not argv[0]:
        return "truncated observation (only a single-file cat or line filter is re-run)"
    if len(argv[0]) == 2 and argv[0][0] == "cat":
        numbered_command = f"cat -n {shlex.quote(argv[0][1])}"
    elif (found := line_filter(argv[0])) is not None:
        numbered_command = f"cat -n {shlex.quote(found[1])} | {found[0]}"
    else:
        return "truncated observation (only a single-file cat or line filter is re-run)"
    full = run(body, cwd)
    with_numbers = run(numbered_command, cwd) if full is not None else None
    if full is None or with_numbers is None:
        return "re-run timed out"
    head, tail = output.head or "", output.tail or ""
    if not (full.startswith(head) and full.endswith(tail)):
        return {files[0]: "not reproducible"}
    numbered_lines: Printed = []
    for ln in lines_of(with_numbers):
        m = CAT_NUMBERED_RE.match(ln)
        if m:
            numbered_lines.append((int(m.group(1)), m.group(2)))
    if [t for _, t in numbered_lines] != lines_of(full):
        return {files[0]: "numbered variant disagrees with original"}
    shown = shown_after(numbered_lines, len(full) - len(tail))
    return {files[0]: FileTruth([t for _, t in shown], shown)}


def shown_after(lines: Printed, offset: int) -> Printed:
    """The lines printed, wholly or in part, from character ``offset`` on, each with the text
    printed of it: the tail usually starts inside a line, whose end the agent saw (a line of
    which only blanks, or only its newline, were printed shows nothing)."""
    pos, out = 0, []
    for n, text in lines:
        if pos >= offset:
            out.append((n, text))
        elif pos + len(text) > offset and text[offset - pos:].strip():
            out.append((n, text[offset - pos:]))
        pos += len(text) + 1
    return out


# --- measuring -------------------------------------------------------------------------------


@dataclass
class Tally:
    """Figures of one trajectory, or of all."""

    views: int = 0
    placed: int = 0
    truth: int = 0
    correct: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def add(self, other: Tally) -> None:
        self.views += other.views
        self.placed += other.placed
        self.truth += other.truth
        self.correct += other.correct
        self.skipped.update(other.skipped)

    def ratios(self) -> tuple[float | None, float | None]:
        """(precision, recall); None where nothing was placed, or nothing was true."""
        return (self.correct / self.placed if self.placed else None,
                self.correct / self.truth if self.truth else None)

    def to_json(self) -> dict[str, Any]:
        precision, recall = self.ratios()
        return {"views": self.views, "placed": self.placed, "truth": self.truth,
                "correct": self.correct, "precision": precision, "recall": recall,
                "skipped": dict(sorted(self.skipped.items()))}


@dataclass
class Findings:
    """Every wrong placement, missed line, misreading and skipped view, for ``--details``."""

    wrong: list[dict[str, Any]] = field(default_factory=list)
    missed: list[dict[str, Any]] = field(default_factory=list)
    misreadings: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)


def truth_lines(view: View, shown: Printed) -> set[int]:
    """Numbers of the shown lines the view's text lands on, aligned in order.

    Identity when the reader kept every printed line; a line it dropped is skipped over, so
    only what the view claims is judged.
    """
    truth: set[int] = set()
    j = 0
    for line in (ln for chunk in view.text or () for ln in chunk):
        while j < len(shown) and shown[j][1] != line:
            j += 1
        if j == len(shown):
            break
        n = shown[j][0]
        if n is not None:
            truth.add(n)
        j += 1
    return truth


def placed_lines(view: View, lines: FileLines) -> set[int]:
    """The lines ``placing`` credits to a text view."""
    placed: set[int] = set()
    for out in place_view(view, lines)[0]:
        if out.start_line is not None and out.end_line is not None:
            placed.update(range(out.start_line, out.end_line + 1))
    return placed


class Measurer:
    """Measures the text views of one trajectory."""

    def __init__(self, job: Job, findings: Findings) -> None:
        self.job = job
        self.findings = findings
        self.tally = Tally()
        self.edited: set[str] = set()

    def skip(self, step: Step, view: View, reason: str) -> None:
        self.tally.skipped[reason] += 1
        self.findings.skipped.append({**self.where(step, view), "reason": reason})

    def where(self, step: Step, view: View) -> dict[str, Any]:
        return {"trajectory": self.job.name, "step": step.index, "command": step.action,
                "file": view.file}

    def run(self, steps: list[Step], obs: dict[int, str]) -> Tally:
        for step in steps:
            views = [v for v in step.views if v.text is not None]
            truth: StepTruth | str | None = None
            for view in views:
                reason = self.reason_to_skip(view)
                if reason is None and truth is None:
                    truth = (reproduce(step, obs[step.index], self.job)
                             if step.index in obs else "observation not found")
                if reason is None:
                    found = truth if isinstance(truth, str) else truth.get(
                        view.file, "no truth for this file")
                    reason = found if isinstance(found, str) else self.measure(step, view, found)
                if reason:
                    self.skip(step, view, reason)
            self.edited.update(posixpath.normpath(posixpath.join(self.job.cwd, e))
                               for e in step.edits)
        return self.tally

    def reason_to_skip(self, view: View) -> str | None:
        """Why a view's text cannot be judged against the base file, before any re-run."""
        if view.post_edit:
            return "post-edit view"
        if view.file in self.edited:
            return "edited by an earlier step"
        real = real_path(view.file, self.job)
        if real is None or not real.is_file():
            return "not in the checkout (agent-created or build artefact)"
        return None

    def measure(self, step: Step, view: View, truth: FileTruth) -> str:
        """Count one view; '' (no skip)."""
        where = self.where(step, view)
        flat = [ln for chunk in view.text or () for ln in chunk]
        if flat != truth.recorded:
            self.findings.misreadings.append({**where, "text": flat, "printed": truth.recorded})
        real = real_path(view.file, self.job)
        assert real is not None
        data = real.read_bytes()
        true = truth_lines(view, truth.shown)
        placed = placed_lines(view, FileLines(data))
        file_lines = data.decode("utf-8", "replace").split("\n")
        for kind, numbers in (("wrong", placed - true), ("missed", true - placed)):
            target = self.findings.wrong if kind == "wrong" else self.findings.missed
            target.extend({**where, "line": n, "text": file_lines[n - 1]}
                          for n in sorted(numbers))
        self.tally.views += 1
        self.tally.placed += len(placed)
        self.tally.truth += len(true)
        self.tally.correct += len(placed & true)
        return ""


def measure_job(job: Job, findings: Findings) -> Tally:
    """Figures of one trajectory; its text views are judged one by one."""
    fmt = job.fmt or adapters.detect(job.trajectory).FORMAT
    tally = Tally()
    if fmt != MINI:
        tally.skipped[f"format {fmt}: observations are read for {MINI} only"] += 1
        return tally
    (traj,) = adapters.read(job.trajectory, fmt)
    return Measurer(job, findings).run(traj.steps, observations(job.trajectory, traj.steps))


# --- report ----------------------------------------------------------------------------------


def ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def row(label: str, t: Tally, width: int) -> str:
    precision, recall = t.ratios()
    return (f"{label:<{width}} {t.views:>5} {t.placed:>6} {t.truth:>5} {t.correct:>7} "
            f"{ratio(precision):>9} {ratio(recall):>6} {sum(t.skipped.values()):>7}")


def print_report(per_job: list[tuple[Job, Tally]], overall: Tally, findings: Findings,
                 details: bool) -> None:
    width = max([len("overall"), *(len(job.name) for job, _ in per_job)])
    print(f"{'trajectory':<{width}} {'views':>5} {'placed':>6} {'truth':>5} {'correct':>7} "
          f"{'precision':>9} {'recall':>6} {'skipped':>7}")
    for job, tally in per_job:
        print(row(job.name, tally, width))
    print(row("overall", overall, width))
    print("\nskipped views by reason:")
    for reason, count in sorted(overall.skipped.items()):
        print(f"  {count:5}  {reason}")
    print(f"\nwrong placements: {len(findings.wrong)}  missed lines: {len(findings.missed)}  "
          f"misreadings: {len(findings.misreadings)}")
    if not details:
        return
    for title, items in (("wrong placements", findings.wrong),
                         ("missed lines", findings.missed)):
        print(f"\n{title}:")
        for it in items:
            print(f"  {it['trajectory']} step {it['step']}: {it['file']}:{it['line']}  "
                  f"{it['text'].strip()!r}\n      $ {one_line(it['command'])}")
    print("\nmisreadings:")
    for it in findings.misreadings:
        print(f"  {it['trajectory']} step {it['step']}: {it['file']}\n"
              f"      $ {one_line(it['command'])}")


def one_line(command: str, width: int = 160) -> str:
    flat = command.replace("\n", "\\n")
    return flat if len(flat) <= width else flat[:width - 1] + "…"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("manifest", type=Path, help="JSON list of instance_id/trajectory/checkout")
    ap.add_argument("--json", type=Path, help="write figures and findings here")
    ap.add_argument("--details", action="store_true",
                    help="list every wrong placement and missed line")
    args = ap.parse_args(argv)
    findings = Findings()
    per_job = [(job, measure_job(job, findings)) for job in load_manifest(args.manifest)]
    overall = Tally()
    for _, tally in per_job:
        overall.add(tally)
    print_report(per_job, overall, findings, args.details)
    if args.json:
        report = {"trajectories": [{"instance_id": j.instance_id, "trajectory": str(j.trajectory),
                                    **t.to_json()} for j, t in per_job],
                  "overall": overall.to_json(), "wrong_placements": findings.wrong,
                  "missed_lines": findings.missed, "misreadings": findings.misreadings,
                  "skipped": findings.skipped}
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
