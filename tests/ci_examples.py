#!/usr/bin/env python3
"""ci_examples.py - run the CI files fragsim ships (examples/ci/) the way
GitHub Actions and GitLab CI would, on this machine, and check that
their shards run every case of the suite exactly once.

Usage: tests/ci_examples.py [--fragsim BIN] FILE.yml...
       (docs/ci.md runs it on examples/ci/*.yml; make test runs docs/ci.md)

For each file (PyYAML reads it; GitHub's file has `jobs:`, GitLab's
has jobs at the top level):

* The job's instances are made as the CI system makes them: GitHub's
  `strategy.matrix` (lists, crossed in key order; `include` and
  `exclude` are not read, and are an error here), with `${{ matrix.X }}`,
  `${{ strategy.job-index }}` and `${{ strategy.job-total }}` replaced in
  the text as Actions does; GitLab's `parallel: N` as N jobs with
  CI_NODE_INDEX = 1..N and CI_NODE_TOTAL = N in the environment, which
  the shell expands. Any other `${{ ... }}` is an error: it would run
  here as something else than on GitHub.
* Each instance runs in a fresh directory holding `build/fragsim` (a link
  to BIN) and links to the repository's cases/, profiles/ and tests/.
  Every line of its `run:` steps (GitHub) or `before_script:` and
  `script:` (GitLab) that starts with `build/fragsim` runs there under
  `sh -c` and must exit 0 (the shipped suite passes); the other lines
  (installing packages, `make`) are listed as not run.
* Each `build/fragsim check` line must write `--junit FILE`, and the
  file must be collected whatever the job's outcome: GitHub, by an
  `actions/upload-artifact` step with `if: always()` whose `path` is the
  file; GitLab, by `artifacts: {when: always, reports: {junit: FILE}}`.
* The union of the instances' JUnit files must name every case under
  the paths given to `check` exactly once: the cases are found here by
  walking the paths (*.yaml and *.yml, hidden entries skipped), not by
  asking fragsim.

Prints what ran and what was found, per file; exit 0 when every check
holds, 1 when one does not (each said on a line `FILE: job J: ...`), 2
for bad usage (no PyYAML, a file that is no CI file).
"""
import argparse
import collections
import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

REPO = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
LINKED = ("cases", "profiles", "tests")
# check's options that take a value (fragsim check --help).
CHECK_VALUED = {"--junit", "--shard", "--exec", "--report", "--format"}
CHECK_FLAGS = {"--json"}
GITLAB_RESERVED = {"default", "include", "stages", "variables", "workflow", "image",
                   "services", "cache", "before_script", "after_script", "spec"}
EXPR = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


class Failed(Exception):
    pass


def substitute(text, values):
    """GitHub's ${{ }} expressions in text, from values."""
    def one(m):
        if m.group(1) not in values:
            raise Failed("unsupported expression '%s' (the checker knows %s)"
                         % (m.group(0), ", ".join(sorted(values))))
        return str(values[m.group(1)])
    return EXPR.sub(one, text)


def lines_of(script):
    """The command lines of a run: string or a GitLab script list."""
    items = script if isinstance(script, list) else [script]
    out = []
    for item in items:
        for line in str(item).split("\n"):
            line = line.strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


def github_jobs(doc):
    """(job name, [instance]) where an instance is (commands, env,
    collected junit paths)."""
    if "on" not in doc and True not in doc:
        raise Failed("no 'on:' (a GitHub workflow says when it runs)")
    jobs = []
    for name, job in doc["jobs"].items():
        matrix = (job.get("strategy") or {}).get("matrix") or {}
        for key in ("include", "exclude"):
            if key in matrix:
                raise Failed("job %s: matrix %s is not read by this checker" % (name, key))
        keys = list(matrix)
        combos = list(itertools.product(*(matrix[k] for k in keys))) or [()]
        instances = []
        for index, combo in enumerate(combos):
            values = {"matrix." + k: v for k, v in zip(keys, combo)}
            values["strategy.job-index"] = index
            values["strategy.job-total"] = len(combos)
            cmds, collected = [], []
            for step in job.get("steps", []):
                if "run" in step:
                    cmds += [substitute(c, values) for c in lines_of(step["run"])]
                uses = str(step.get("uses", ""))
                if uses.startswith("actions/upload-artifact@"):
                    if "always()" not in str(step.get("if", "")):
                        raise Failed("job %s: the artifact step has no 'if: always()': "
                                     "a failed shard's JUnit file would be lost" % name)
                    path = substitute(str((step.get("with") or {}).get("path", "")), values)
                    collected += lines_of(path)
            instances.append((cmds, {}, collected))
        jobs.append((name, instances))
    return jobs


def gitlab_jobs(doc):
    jobs = []
    for name, job in doc.items():
        if name in GITLAB_RESERVED or name.startswith(".") or not isinstance(job, dict):
            continue
        if "script" not in job:
            raise Failed("job %s: no script" % name)
        n = job.get("parallel", 1)
        if not isinstance(n, int) or n < 1:
            raise Failed("job %s: parallel: only a number is read by this checker" % name)
        art = job.get("artifacts") or {}
        junit = (art.get("reports") or {}).get("junit", [])
        collected = lines_of(junit)
        if collected and art.get("when") != "always":
            raise Failed("job %s: artifacts without 'when: always': "
                         "a failed shard's JUnit file would be lost" % name)
        cmds = lines_of(job.get("before_script", [])) + lines_of(job["script"])
        instances = []
        for k in range(1, n + 1):
            env = {"CI_NODE_INDEX": str(k), "CI_NODE_TOTAL": str(n)} if "parallel" in job else {}
            instances.append((cmds, env, collected))
        jobs.append((name, instances))
    return jobs


def check_args(cmd):
    """The paths and the --junit file of a `build/fragsim check` line."""
    words = shlex.split(cmd)
    if len(words) < 2 or words[1] != "check":
        return None, None
    paths, junit, i = [], None, 2
    while i < len(words):
        w = words[i]
        opt, eq, val = w.partition("=")
        if opt in CHECK_VALUED:
            if not eq:
                i += 1
                val = words[i] if i < len(words) else ""
            if opt == "--junit":
                junit = val
        elif w in CHECK_FLAGS:
            pass
        elif w.startswith("-"):
            raise Failed("'%s': an option of check this checker does not know" % w)
        else:
            paths.append(w)
        i += 1
    return paths, junit


def cases_under(root, paths):
    """Every *.yaml and *.yml under paths (relative to root), by walking."""
    found = []
    for p in paths:
        full = os.path.join(root, p)
        if os.path.isfile(full):
            found.append(p)
            continue
        for d, dirs, files in os.walk(full, followlinks=True):
            dirs[:] = sorted(x for x in dirs if not x.startswith("."))
            rel = os.path.relpath(d, root)
            found += [os.path.join(rel, f) for f in sorted(files)
                      if not f.startswith(".") and f.endswith((".yaml", ".yml"))]
    return found


def junit_files(path):
    root = ET.parse(path).getroot()
    return [tc.get("file") for tc in root.iter("testcase")]


def run_job(fragsim, label, name, instances):
    ran, not_run, union, suites, nfiles = [], [], collections.Counter(), [], 0
    for n, (cmds, env, collected) in enumerate(instances):
        work = tempfile.mkdtemp(prefix="fragsim-ci-")
        try:
            os.mkdir(os.path.join(work, "build"))
            os.symlink(os.path.abspath(fragsim), os.path.join(work, "build", "fragsim"))
            for d in LINKED:
                os.symlink(os.path.join(REPO, d), os.path.join(work, d))
            for cmd in cmds:
                if not cmd.startswith("build/fragsim"):
                    if n == 0:
                        not_run.append(cmd)
                    continue
                p = subprocess.run(["sh", "-c", cmd], cwd=work, env=dict(os.environ, **env),
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                shown = cmd if not env else "%s  (%s)" % (
                    cmd, " ".join("%s=%s" % kv for kv in sorted(env.items())))
                if p.returncode != 0:
                    raise Failed("job %s: '%s' exited %d:\n%s" % (name, shown, p.returncode,
                                                               p.stdout[-2000:]))
                ran.append(shown)
                paths, junit = check_args(cmd)
                if paths is None:
                    continue
                if not junit:
                    raise Failed("job %s: '%s' writes no --junit file" % (name, cmd))
                if junit not in collected:
                    raise Failed("job %s: %s is not collected (the job keeps %s)"
                                 % (name, junit, ", ".join(collected) or "nothing"))
                suites.append(tuple(paths))
                union.update(junit_files(os.path.join(work, junit)))
                nfiles += 1
        finally:
            shutil.rmtree(work)
    if not suites:
        raise Failed("job %s: runs no 'build/fragsim check'" % name)
    if len(set(suites)) != 1:
        raise Failed("job %s: the instances check different paths: %s" % (name, sorted(set(suites))))
    want = cases_under(REPO, suites[0])
    missing = [c for c in want if c not in union]
    twice = sorted(c for c, k in union.items() if k > 1)
    extra = sorted(c for c in union if c not in want)
    print("%s: job %s: %d instance(s), every fragsim command exit 0" % (label, name, len(instances)))
    for cmd in ran[:1]:
        print("  ran      %s" % cmd)
    if len(ran) > 1:
        print("  ran      ... and %d more" % (len(ran) - 1))
    for cmd in not_run:
        print("  not run  %s" % cmd)
    problems = []
    if missing:
        problems.append("%d case(s) in no JUnit file: %s" % (len(missing), ", ".join(missing[:3])))
    if twice:
        problems.append("%d case(s) in more than one: %s" % (len(twice), ", ".join(twice[:3])))
    if extra:
        problems.append("%d unexpected: %s" % (len(extra), ", ".join(extra[:3])))
    if problems:
        raise Failed("job %s: %s" % (name, "; ".join(problems)))
    print("  JUnit    %d file(s), %d test cases: each case under %s exactly once"
          % (nfiles, sum(union.values()), " ".join(suites[0])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fragsim", default=shutil.which("fragsim") or
                    os.path.join(REPO, "build", "fragsim"))
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    try:
        import yaml
    except ImportError:
        print("ci_examples.py: PyYAML is needed (python3-yaml)", file=sys.stderr)
        return 2
    failed = 0
    for path in a.files:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
        if not isinstance(doc, dict):
            print("ci_examples.py: %s: not a CI file (no mapping)" % path, file=sys.stderr)
            return 2
        try:
            jobs = github_jobs(doc) if "jobs" in doc else gitlab_jobs(doc)
            if not jobs:
                raise Failed("no job")
            for name, instances in jobs:
                run_job(a.fragsim, path, name, instances)
        except Failed as e:
            print("%s: %s" % (path, e))
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
