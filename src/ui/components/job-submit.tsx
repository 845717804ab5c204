/**
 * Running a job from its file, as `nomad job run` does it over the API:
 *
 *   HCL ──> POST /v1/jobs/parse ─┐                       problems: shown under the editor, each one
 *   JSON ({"Job":…} or a job) ───┴─> POST /v1/validate/job ─> POST /v1/jobs ─> the job's page
 *
 * A problem that names a line ("job.hcl:14,7: …") is a button that puts the
 * cursor on that line.
 */
import { useRef, useState } from "preact/hooks";
import { ApiError, describeError, inNamespace, sendJson } from "../api/client.ts";
import { JobSchema, RegisterResponseSchema, ValidateResponseSchema } from "../api/shapes.ts";
import { navigate, paths } from "../router.ts";
import * as v from "valibot";

const EXAMPLE = `job "example" {
  datacenters = ["dc1"]

  group "web" {
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do date; sleep 5; done"]
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

/** A `namespace = …` line: the file chooses its job's namespace (or a vault or consul block's, which then keeps it too). */
const NAMESPACE_ATTRIBUTE = /^\s*namespace\s*=/m;

/** The name problems in the file are reported under. */
const FILE_NAME = "job.hcl";

interface Problem {
  text: string;
  line?: number;
  column?: number;
}

function problemsOf(message: string): Problem[] {
  return message
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .map((text) => {
      const position = /^[^:\s]+:(\d+),(\d+):/.exec(text);
      return position ? { text, line: Number(position[1]), column: Number(position[2]) } : { text };
    });
}

/** The job in a JSON file: Nomad's {"Job": {...}}, or the job itself. */
function jobFromJson(text: string): unknown {
  const parsed = JSON.parse(text) as Record<string, unknown>;
  return parsed && typeof parsed === "object" && "Job" in parsed ? parsed.Job : parsed;
}

/** `namespace`: where a job that names none goes (the jobs list's; none for "All", which leaves it to the agent). */
export function JobSubmit({ namespace, onDone }: { namespace: string | undefined; onDone: () => void }) {
  const asked = (path: string) => (namespace === undefined ? path : inNamespace(path, namespace));
  const [source, setSource] = useState(EXAMPLE);
  const [problems, setProblems] = useState<Problem[]>([]);
  const [busy, setBusy] = useState(false);
  const editor = useRef<HTMLTextAreaElement>(null);

  const goTo = (problem: Problem) => {
    const element = editor.current;
    if (!element || problem.line === undefined) return;
    const lines = element.value.split("\n");
    const before = lines.slice(0, problem.line - 1).reduce((sum, line) => sum + line.length + 1, 0);
    const at = before + Math.max(0, (problem.column ?? 1) - 1);
    element.focus();
    element.setSelectionRange(at, at);
    const lineHeight = parseFloat(getComputedStyle(element).lineHeight) || 18;
    element.scrollTop = Math.max(0, (problem.line - 3) * lineHeight);
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblems([]);
    try {
      let job: unknown;
      if (source.trimStart().startsWith("{")) {
        try {
          job = jobFromJson(source);
        } catch (err) {
          throw new ApiError(400, `${FILE_NAME}: not valid JSON: ${(err as Error).message}`);
        }
      } else {
        const parsed = await sendJson(asked("/v1/jobs/parse"), v.looseObject({}), { method: "POST", body: { JobHCL: source, Canonicalize: true } });
        // Parsing fills in "default" for a file that names no namespace: such a file runs in the list's namespace instead.
        job = namespace !== undefined && !NAMESPACE_ATTRIBUTE.test(source) ? { ...parsed, Namespace: namespace } : parsed;
      }
      const validation = await sendJson(asked("/v1/validate/job"), ValidateResponseSchema, { method: "POST", body: { Job: job } });
      const errors = [...validation.ValidationErrors, ...(validation.Error && validation.ValidationErrors.length === 0 ? [validation.Error] : [])];
      if (errors.length > 0) {
        setProblems(errors.flatMap(problemsOf));
        return;
      }
      await sendJson(asked("/v1/jobs"), RegisterResponseSchema, { method: "POST", body: { Job: job } });
      const registered = v.parse(v.looseObject({ ID: JobSchema.entries.ID, Namespace: JobSchema.entries.Namespace }), job);
      onDone();
      navigate(paths.job(registered.ID, registered.Namespace || namespace));
    } catch (err) {
      setProblems(err instanceof ApiError && err.status === 400 ? problemsOf(err.message) : [{ text: describeError(err) }]);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="submit-job" onSubmit={(event) => void submit(event)}>
      <label for="job-source">Job file (HCL, or JSON)</label>
      <textarea
        id="job-source"
        ref={editor}
        class="mono"
        rows={18}
        spellcheck={false}
        value={source}
        onInput={(event) => setSource(event.currentTarget.value)}
        aria-invalid={problems.length > 0}
        aria-describedby="job-problems"
      />
      <ul id="job-problems" class="problems" aria-live="polite">
        {problems.map((problem, i) => (
          <li key={i}>
            {problem.line !== undefined ? (
              <button type="button" class="link" onClick={() => goTo(problem)}>
                {problem.text}
              </button>
            ) : (
              problem.text
            )}
          </li>
        ))}
      </ul>
      <div class="form-actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Running…" : "Run job"}
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
