// A coordinator that is not Python: it scores an agent's run folder task by task through
// `verial serve` (Verial's v1 flow, a solver key then the run's bearer token) and reads the
// results back at Verial's three levels (the task and criterion runs with an org key).
//
//   VERIAL_URL=http://127.0.0.1:8000 VERIAL_KEY=vrl_slv_... VERIAL_ORG_KEY=vk_... \
//   VERIAL_BENCHMARK=sftp-drops@1 VERIAL_RUN_DIR=good-agent node dist/client.js
//
// Every type comes from api.d.ts, generated from the server's /openapi.json
// (python scripts/ts_client.py). Prints one JSON object: the run, each completed task run,
// one task run and one criterion run as an org key reads them, and what the evidence says.

import type { components } from "./api.js";

type Schemas = components["schemas"];
type CreatedRun = Schemas["CreatedRun"];
type StartedTaskRun = Schemas["StartedTaskRun"];
type CompletedTaskRun = Schemas["CompletedTaskRunOut"];
type BenchmarkRun = Schemas["BenchmarkRunOut"];
type TaskRun = Schemas["TaskRunOut"];
type CriterionRun = Schemas["CriterionRunOut"];
type Problem = Schemas["ProblemOut"];

function env(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`set ${name}`);
  }
  return value;
}

async function call<T>(url: string, token: string, body?: unknown): Promise<T> {
  const response = await fetch(url, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    const problem = (await response.json()) as Problem;
    throw new Error(`${response.status} ${problem.title}: ${problem.detail}`);
  }
  return (await response.json()) as T;
}

/** The evidence's rows, whichever check wrote them (Verial's keys, one per check type; the
 * engine's models, so a key is absent when the check could not write it, an error). */
function rows(criterion: CriterionRun): { path: string | null; passed: boolean }[] {
  const evidence = criterion.evidence;
  if (evidence == null) {
    return []; // elided: a scored run, read without an org key
  }
  const plain = (found: { path?: string | null; passed: boolean }[] | undefined) =>
    (found ?? []).map((r) => ({ path: r.path ?? null, passed: r.passed }));
  if ("fieldResults" in evidence) {
    return plain(evidence.fieldResults);
  }
  if ("field_results" in evidence) {
    return plain(evidence.field_results);
  }
  if ("assertionResults" in evidence) {
    return plain(evidence.assertionResults);
  }
  if ("phraseResults" in evidence) {
    return (evidence.phraseResults ?? []).map((r) => ({ path: r.phrase, passed: r.found }));
  }
  return [];
}

async function main(): Promise<void> {
  const base = env("VERIAL_URL");
  const key = env("VERIAL_KEY");
  const org = env("VERIAL_ORG_KEY");
  const runDir = env("VERIAL_RUN_DIR");
  const run = await call<CreatedRun>(`${base}/v1/benchmark-runs`, key, {
    benchmark: env("VERIAL_BENCHMARK"),
    agent: "ts-client",
  });
  // the bearer token is scoped to this run: it is all the agent harness needs from here on
  const token = run.bearer_token;
  const completed: CompletedTaskRun[] = [];
  for (const task of run.task_runs) {
    // start: what the agent is asked to do (the task_item, never the rubric)
    const started = await call<StartedTaskRun>(task.start_url, token, {});
    if (started.phase !== "started") {
      throw new Error(`task run ${task.id} did not start`);
    }
    completed.push(
      await call<CompletedTaskRun>(task.complete_url, token, { sandbox: { run_dir: runDir } }),
    );
  }
  const level1 = await call<BenchmarkRun>(`${base}/v1/benchmark-runs/${run.benchmark_run_id}`, token);
  // the levels below a run are an organization key's (Verial's internal endpoints)
  const level2 = await call<TaskRun>(`${base}/task-runs/${completed[0].task_run_id}`, org);
  const level3 = await call<CriterionRun>(
    `${base}/criterion-runs/${level2.criterion_runs[0].id}`,
    org,
  );
  const axes = Object.entries(level2.axes).map(([name, axis]) => ({
    name,
    score: axis.score,
    weight: axis.weight,
  }));
  console.log(
    JSON.stringify({
      run: level1,
      task_runs: completed,
      task: level2,
      criterion: level3,
      axes,
      rows: rows(level3),
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
