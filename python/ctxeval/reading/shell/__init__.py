"""Read what a shell command showed: the views, edits and command kinds of one agent step.

Shell-based agents (mini-swe-agent, OpenHands ``execute_bash``, Codex, Claude Code ``Bash``) run
arbitrary bash. The command is evidence, the observation is the truth: ``read_shell`` parses the
command into pipelines, models what each pipeline prints (which lines of which file, in which
order, with which line-number prefixes) and then reads the observation to credit only what was
really printed. Where the output prints line numbers they win over what the command implies.

Paths stay as the command wrote them, joined with the working directory when one is known (``cd``
moves it for the later commands of the same string; ``bash -c`` and ``( … )`` run in a child).
Files named by an expansion (``$F``, ``*.py``, ``~``) are never credited under that name. A view of
a file the same command edited before (``sed -i … f && cat f``) is ``post_edit``.

Lines printed without their positions are kept as evidence, not credited: a filtered stream
without numbers (``grep x f`` without ``-n``, ``grep -r x dir``, ``sed -n '/re/,/re/p'``,
``tail -n N f``) gives a file-level view (``start_line=None``) per file whose ``text`` holds the
printed lines, and so does the tail of an output truncated in the middle (mini-swe-agent's
``<output_head>``/``<output_tail>``, OpenHands' and Codex's marker lines) unless its lines carry
their own numbers. With the source at hand (``convert --repos``, ``evaluate``),
:mod:`ctxeval.reading.placing` turns the lines that fit in one place only into line views. Text is
kept only where every printed line is a file line unchanged and in file order (``grep -o``, ``cut``,
``sort``, ``sed s///p`` keep none).

Known limits (deliberately conservative, never crediting what may not have been shown):

- a filtered stream of several files without names in front of its lines (``cat a b | grep x``)
  gives nothing;
- a line cut by truncation (the last of ``<output_head>``, the first of ``<output_tail>``, the
  last before a timeout) counts as shown: part of it was. Kept as text, the lines on either side
  of a cut inside a line are marked as printed in part (``View.partial``) and placed by that
  part; the last line of an output stopped early is left out of the text (its end is unknown);
  a numbered line printed in part counts only when its number was printed whole;
- several unnumbered outputs in one command (``cat a; cat b``) cannot be split without the
  source: each is credited whole when the output is complete and the command succeeded, else at
  file level.

Supported commands, by family: the module that reads them. A command not listed is read for
its kind and its edits only.

================  ===========================================================================
module            commands
================  ===========================================================================
``lexer``         the syntax: words, quotes, ``&&`` ``||`` ``;`` ``|``, redirections, heredocs,
                  ``( … )``, ``$( … )``
``pipeline``      wrappers (``sudo``, ``env``, ``timeout``, ``nice``, ``VAR=x``, ...); filters
                  that keep lines but not positions (``sort``, ``uniq``, ``cut``, ``tr``,
                  ``column``, ``fold``, ``expand``, ``rev``, ``fmt``); ``tee``
``viewing``       ``cat`` ``less`` ``more`` ``bat`` ``batcat`` (``-n``), ``nl``, ``head`` and
                  ``tail`` (``-n``, ``+N``), ``sed`` (``-n`` with line and ``/re/`` addresses),
                  ``awk`` ``gawk`` ``mawk`` (``NR`` ranges), ``python -c`` printing a file;
                  the dispatch of every command to its family
``search``        ``grep`` ``egrep`` ``fgrep``, ``rg``, ``ag``, ``git grep``, ``xargs grep``,
                  ``find … -exec grep … {} +``
``editing``       ``>`` ``>>``, ``sed -i``, ``perl -i``, ``tee``, ``cp`` ``mv`` ``install``,
                  ``patch``, ``git apply`` ``restore`` ``checkout``; ``git diff`` shows the
                  edited files
``interpreters``  ``bash`` ``sh`` ``zsh`` ``dash -c SCRIPT``; Python code that writes files;
                  ``echo``
``output``        output matching: truncation markers, errors and tool messages; the
                  observation split among the pipelines that printed it
``views``         the views of each pipeline's printed lines (numbers, text to place, grep
                  output per file, ``==> f <==`` headers)
``reader``        the entry point, :func:`read_shell`, and :class:`ShellReading`; ``cd`` and
                  ``pushd`` move the working directory for the commands after them
================  ===========================================================================
"""

from .lexer import cwd_after, split_commands
from .reader import ShellReading, read_shell

__all__ = ["ShellReading", "cwd_after", "read_shell", "split_commands"]
