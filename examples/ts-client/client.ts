// A coordinator that is not Python: it scores an agent's run folder task by task through
// `verial serve` and reads the results back at Verial's three levels.
//
//   VERIAL_URL=http://127.0.0.1:8000 VERIAL_KEY=vrl_slv_... \
//   VERIAL_BENCHMARK=sftp-drops@1 VERIAL_RUN_DIR=good-agent node dist/client.js
//
// Prints one JSON object: the run, each completed task run and one criterion run.

interface TaskRunRef {
  id: string;
  task_id: string;
  name: string | null;
  phase: string;
  start_url: string;
  complete_url: string;
}

interface StartedTask {
  id: string;
  phase: string;
  task_item: Record<string, unknown> | null;
}

interface CreatedRun {
  id: string;
  run_token: string;
  run_token_expires_at: string;
  task_runs: TaskRunRef[];
}

interface CriterionRun {
  id: string;
  criterion_id: string;
  status: string;
  score: number | null;
}

interface TaskRun {
  id: string;
  verdict: string | null;
  score: number | null;
  criterion_runs: CriterionRun[];
}

interface BenchmarkRun {
  id: string;
  status: string;
  score: number | null;
  verdict: string | null;
  progress: { task_runs: number; done: number };
}

interface Problem {
  title: string;
  status: number;
  detail: string;
}

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

async function main(): Promise<void> {
  const base = env("VERIAL_URL");
  const key = env("VERIAL_KEY");
  const runDir = env("VERIAL_RUN_DIR");
  const run = await call<CreatedRun>(`${base}/v1/benchmark-runs`, key, {
    benchmark: env("VERIAL_BENCHMARK"),
    agent: "ts-client",
  });
  // the run token is scoped to this run: it is all the agent harness needs from here on
  const completed: TaskRun[] = [];
  for (const task of run.task_runs) {
    // start: what the agent is asked to do (the task_item, never the rubric)
    const started = await call<StartedTask>(task.start_url, run.run_token, {});
    if (started.phase !== "started") {
      throw new Error(`task run ${task.id} did not start`);
    }
    completed.push(
      await call<TaskRun>(task.complete_url, run.run_token, { sandbox: { run_dir: runDir } }),
    );
  }
  const level1 = await call<BenchmarkRun>(`${base}/v1/benchmark-runs/${run.id}`, run.run_token);
  const level2 = await call<TaskRun>(`${base}/v1/task-runs/${completed[0].id}`, run.run_token);
  const level3 = await call<CriterionRun>(
    `${base}/v1/criterion-runs/${level2.criterion_runs[0].id}`,
    run.run_token,
  );
  console.log(JSON.stringify({ run: level1, task_runs: completed, task: level2, criterion: level3 }));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
