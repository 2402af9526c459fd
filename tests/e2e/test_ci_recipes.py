"""The CI recipes in examples/ci/ run as their CI would run them (issue 27 item 4).

Each recipe is read as YAML and its shell steps run, in order, in a job folder, with the variables its CI sets,
against the example runs (scripts/make-example-runs.sh: real XLA dumps). Three pipelines, one store carried
between them as the recipe's cache carries it:
  1. main, first run: no baseline yet, so the gate is inconclusive and the job warns but passes;
  2. a change whose dumps regress (tests/fixtures/gate and tests/fixtures/report: jit_step and jit_mlp grow):
     the job fails, and its summary, JUnit and HTML report name the two modules;
  3. a change whose dumps equal main's: the job passes.
Steps that call an action (GitHub `uses:`) are played by the test: the artifact download puts the dumps where
the step says, the cache carries its path between pipelines, the uploads must find their files.
"""
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

import yaml  # Debian's python3-yaml

XLADB = os.environ["XLADB"]
SOURCE_DIR = os.environ["XLADB_SOURCE_DIR"]
RECIPES = os.path.join(SOURCE_DIR, "examples", "ci")


def make_example_runs(out):
    subprocess.run([os.path.join(SOURCE_DIR, "scripts", "make-example-runs.sh"), out], check=True,
                   capture_output=True)
    return os.path.join(out, "nightly-2026-11-01"), os.path.join(out, "nightly-2026-11-02")


def shell_env(extra):
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(XLADB) + os.pathsep + env["PATH"]
    env.update(extra)
    return env


def run_shell(script, cwd, env):
    """bash as both CIs run a script: errexit and pipefail, no profile."""
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def total_bytes_used(path):
    with open(path, encoding="utf-8") as f:
        return int(re.search(r"^Total bytes used: (\d+)", f.read(), re.M).group(1))


def junit_failures(path):
    suites = ET.parse(path).getroot()
    return sorted(case.get("name") for case in suites.iter("testcase") if case.find("failure") is not None)


class RecipeTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="xladb-ci-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.main_dumps, self.regressed_dumps = make_example_runs(os.path.join(self.tmp, "examples"))
        self.cache = os.path.join(self.tmp, "cache")  # what the CI's cache keeps between pipelines
        os.makedirs(self.cache)

    def job_folder(self, name, dumps, dump_path):
        folder = os.path.join(self.tmp, name)
        shutil.copytree(dumps, os.path.join(folder, dump_path))
        return folder

    def restore_cache(self, folder, path):
        if os.path.isdir(os.path.join(self.cache, path)):
            shutil.copytree(os.path.join(self.cache, path), os.path.join(folder, path))

    def save_cache(self, folder, path):
        shutil.rmtree(os.path.join(self.cache, path), ignore_errors=True)
        if os.path.isdir(os.path.join(folder, path)):
            shutil.copytree(os.path.join(folder, path), os.path.join(self.cache, path))

    def regressed_modules(self):
        """The modules whose buffer assignment's `Total bytes used:` grows from the main run to the change, read
        from the dump files themselves (the gate's default metrics include total_bytes)."""
        grown = []
        for name in sorted(os.listdir(self.regressed_dumps)):
            base = os.path.join(self.main_dumps, name)
            if name.endswith("-buffer-assignment.txt") and os.path.isfile(base):
                if total_bytes_used(os.path.join(self.regressed_dumps, name)) > total_bytes_used(base):
                    grown.append(name.split(".")[1])  # module_NNNN.<name>.<stage>-buffer-assignment.txt
        self.assertTrue(grown, "the example runs should hold a regression")
        return sorted(grown)


class GitHubActionsRecipe(RecipeTestCase):
    KNOWN_ACTIONS = ("actions/download-artifact@", "actions/cache@", "actions/upload-artifact@",
                     "mikepenz/action-junit-report@")

    def setUp(self):
        super().setUp()
        with open(os.path.join(RECIPES, "github-actions.yml"), encoding="utf-8") as f:
            workflow = yaml.safe_load(f)
        self.job = workflow["jobs"]["memory-gate"]
        self.steps = self.job["steps"]
        for step in self.steps:
            if "uses" in step:
                self.assertTrue(step["uses"].startswith(self.KNOWN_ACTIONS), f"an action the test cannot play: {step}")
            else:
                self.assertNotIn("${{", step["run"], "expressions in run: steps; use environment variables")
        self.cache_path = next(s for s in self.steps if s.get("uses", "").startswith("actions/cache@"))["with"]["path"]
        self.dump_path = next(s for s in self.steps
                              if s.get("uses", "").startswith("actions/download-artifact@"))["with"]["path"]

    def pipeline(self, name, dumps, sha, ref_name, head_ref=""):
        """Runs the job's steps in order as Actions does (a failed step skips the rest but `if: always()`);
        returns {step name: completed process} for run: steps, and the job folder."""
        folder = self.job_folder(name, dumps, self.dump_path)
        self.restore_cache(folder, self.cache_path)
        summary = os.path.join(folder, "step_summary.md")
        open(summary, "w").close()
        env = shell_env({**self.job.get("env", {}), "GITHUB_SHA": sha, "GITHUB_REF_NAME": ref_name,
                         "GITHUB_HEAD_REF": head_ref, "GITHUB_WORKSPACE": folder, "GITHUB_STEP_SUMMARY": summary,
                         "GITHUB_ACTIONS": "true", "CI": "true"})
        results, failed = {}, False
        for step in self.steps:
            if failed and step.get("if") != "always()":
                continue
            if step.get("uses", "").startswith("actions/upload-artifact@"):
                for path in step["with"]["path"].split():
                    self.assertTrue(os.path.isfile(os.path.join(folder, path)), f"{name}: nothing to upload at {path}")
            elif step.get("uses", "").startswith("mikepenz/action-junit-report@"):
                self.assertTrue(os.path.isfile(os.path.join(folder, step["with"]["report_paths"])))
            elif "run" in step:
                done = run_shell(step["run"], folder, env)
                results[step["name"]] = done
                failed = failed or done.returncode != 0
        if not failed:
            self.save_cache(folder, self.cache_path)  # actions/cache saves at the end of a job that passed
        with open(summary, encoding="utf-8") as f:
            return results, f.read(), folder

    def test_main_then_a_regression_then_no_change(self):
        ingest, gate = "Ingest this commit's dumps", "Gate against the newest run of main"

        results, summary, _ = self.pipeline("main-1", self.main_dumps, "a" * 40, "main")
        self.assertEqual(results[ingest].returncode, 0, results[ingest].stderr)
        self.assertEqual(results[gate].returncode, 0, "no baseline yet: the job warns, it does not fail")
        self.assertIn("::warning title=xladb::", results[gate].stdout)
        self.assertIn("INCONCLUSIVE", summary)

        results, summary, folder = self.pipeline("pr-regress", self.regressed_dumps, "b" * 40, "7/merge", "feature")
        self.assertEqual(results[ingest].returncode, 0, results[ingest].stderr)
        self.assertEqual(results[gate].returncode, 1, "a regression fails the job")
        self.assertIn("FAIL", summary)
        for module in self.regressed_modules():
            self.assertIn(module, summary)
        self.assertEqual([n.split("#")[0] for n in junit_failures(os.path.join(folder, "xladb-junit.xml"))],
                         self.regressed_modules())
        with open(os.path.join(folder, "xladb-report.html"), encoding="utf-8") as f:
            self.assertIn("jit_step", f.read())

        results, summary, _ = self.pipeline("pr-same", self.main_dumps, "c" * 40, "8/merge", "tidy")
        self.assertEqual(results[gate].returncode, 0, results[gate].stderr)
        self.assertIn("PASS", summary)
        self.assertNotIn("::warning", results[gate].stdout)


class GitLabCiRecipe(RecipeTestCase):
    def setUp(self):
        super().setUp()
        with open(os.path.join(RECIPES, "gitlab-ci.yml"), encoding="utf-8") as f:
            self.job = yaml.safe_load(f)["memory-gate"]
        self.cache_path = self.job["cache"]["paths"][0].rstrip("/")
        self.allowed_exit_codes = self.job["allow_failure"]["exit_codes"]

    def pipeline(self, name, dumps, sha, ref_name):
        """The job's script as the runner runs it: one shell, every line under errexit. Returns (exit code,
        output, folder)."""
        folder = self.job_folder(name, dumps, "xla_dump")
        self.restore_cache(folder, self.cache_path)
        env = shell_env({**self.job.get("variables", {}), "CI_COMMIT_SHA": sha, "CI_COMMIT_REF_NAME": ref_name,
                         "CI_PROJECT_DIR": folder, "GITLAB_CI": "true", "CI": "true"})
        done = run_shell("\n".join(self.job["script"]), folder, env)
        self.save_cache(folder, self.cache_path)  # GitLab saves the cache whatever the job's result
        for path in self.job["artifacts"]["paths"] + [self.job["artifacts"]["reports"]["junit"]]:
            self.assertTrue(os.path.isfile(os.path.join(folder, path)), f"{name}: no artifact {path}")
        return done.returncode, done.stdout + done.stderr, folder

    def test_main_then_a_regression_then_no_change(self):
        rc, out, _ = self.pipeline("main-1", self.main_dumps, "a" * 40, "main")
        self.assertEqual(rc, 3, out)
        self.assertIn(rc, self.allowed_exit_codes, "no baseline yet: allowed to fail, shown as a warning")
        self.assertIn("INCONCLUSIVE", out)

        rc, out, folder = self.pipeline("mr-regress", self.regressed_dumps, "b" * 40, "feature")
        self.assertEqual(rc, 1, out)
        self.assertNotIn(rc, self.allowed_exit_codes)
        for module in self.regressed_modules():
            self.assertIn(module, out)
        self.assertEqual([n.split("#")[0] for n in junit_failures(os.path.join(folder, "xladb-junit.xml"))],
                         self.regressed_modules())

        rc, out, _ = self.pipeline("mr-same", self.main_dumps, "c" * 40, "tidy")
        self.assertEqual(rc, 0, out)
        self.assertIn("PASS", out)


if __name__ == "__main__":
    unittest.main()
