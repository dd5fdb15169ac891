import {
  budgetProblems,
  computeCost,
  costForJson,
  escapeControlCharacters,
  formatAmount,
  formatProblemLine,
  problemForJson,
  stringifyJsonSafely,
  type Cost,
  type CostRow,
  type FlowSpec,
  type MachineCost,
  type SpecProblem,
} from '@flowing/spec';
import { loadProjectSpecs } from '@flowing/codegen/cli';
import { loadToolCatalog } from '@flowing/codegen';

const EXIT_OK = 0;
const EXIT_PROBLEMS = 1;
const EXIT_USAGE = 2;

interface Report {
  file: string;
  spec: FlowSpec;
  cost: MachineCost;
  problems: SpecProblem[];
}

/**
 * `flowing cost [machine...] [--json]`: the most each turn and each path to a final state can cost, from the specs
 * alone. Exit 1 when a path is over its spec's budget, 2 on an unknown machine.
 */
export async function costCommand(machines: string[], options: { json?: boolean }, rootDir = process.cwd()): Promise<number> {
  const specs = await loadProjectSpecs(rootDir);
  const unknown = machines.filter((id) => !specs.has(id));
  if (unknown.length > 0) {
    const known = [...specs.keys()].join(', ') || 'none';
    process.stderr.write(escapeControlCharacters(`flowing cost: no machine ${unknown.join(', ')} (machines: ${known})`) + '\n');
    return EXIT_USAGE;
  }
  const tools = await loadToolCatalog(rootDir);
  const resolveMachine = (id: string) => specs.get(id)?.spec;
  const reports: Report[] = [];
  for (const id of machines.length > 0 ? machines : [...specs.keys()]) {
    const { file, spec } = specs.get(id)!;
    const cost = computeCost(spec, { tools, resolveMachine });
    reports.push({ file, spec, cost, problems: [...cost.problems, ...budgetProblems(spec, cost)] });
  }
  process.stdout.write(
    options.json ? stringifyJsonSafely({ machines: reports.map(reportForJson) }, 2) + '\n' : reports.map(reportText).join('\n'),
  );
  return reports.some((report) => report.problems.some((p) => p.severity === 'error')) ? EXIT_PROBLEMS : EXIT_OK;
}

function rowForJson(row: CostRow) {
  return {
    from: row.from,
    ...(row.event === undefined ? {} : { event: row.event }),
    to: row.to,
    cost: costForJson(row.cost),
    states: row.states,
  };
}

function reportForJson({ file, spec, cost, problems }: Report) {
  return {
    machineId: cost.machineId,
    file,
    perTurn: cost.perTurn,
    approximate: cost.approximate,
    maximum: { turn: costForJson(cost.maximum.turn), session: costForJson(cost.maximum.session) },
    ...(spec.budget === undefined ? {} : { budget: spec.budget }),
    turns: cost.turns.map(rowForJson),
    paths: cost.paths.map(rowForJson),
    calls: Object.fromEntries(Object.entries(cost.calls).map(([state, call]) => [state, { ...call, cost: costForJson(call.cost) }])),
    loops: cost.loops.map((loop) => ({ states: loop.states, passes: loop.passes, counter: loop.counter, reason: loop.reason })),
    problems: problems.map(problemForJson),
  };
}

const WIDTH = 11;

function line(model: string, tool: string, tokens: string, what: string): string {
  return `  ${model.padStart(WIDTH)} ${tool.padStart(WIDTH)} ${tokens.padStart(WIDTH)}  ${what}`;
}

function costLine(cost: Cost, what: string): string {
  return line(formatAmount(cost.modelCalls), formatAmount(cost.toolCalls), formatAmount(cost.tokens), what);
}

function turnText(row: CostRow): string {
  const head = row.from === '(start)' ? '(start) →' : `${row.from} --${row.event}-->`;
  return `${head} ${row.states.join(' → ')}`;
}

/** The table of one machine; every line is escaped on its own, so a name from the spec can never split one. */
function reportText({ file, spec, cost, problems }: Report): string {
  const lines = [`${cost.machineId} (${file})`];
  if (cost.perTurn)
    lines.push('  per turn: from the start or an event to the next waiting or final state (a chat loop is counted per turn)');
  lines.push(line('model calls', 'tool calls', 'tokens', cost.perTurn ? 'turn' : 'path'));
  for (const row of cost.turns) lines.push(costLine(row.cost, turnText(row)));
  if (cost.perTurn) {
    const heading = cost.approximate
      ? 'paths to a final state: too many to list, every turn counted once'
      : 'paths to a final state, each turn counted once';
    lines.push(line('', '', '', heading));
    for (const row of cost.paths)
      lines.push(costLine(row.cost, `→ ${row.to}: ${row.states.length > 0 ? row.states.join(' → ') : 'every turn once'}`));
    lines.push(costLine(cost.maximum.turn, 'maximum per turn'));
  }
  lines.push(costLine(cost.maximum.session, cost.perTurn ? 'maximum per path, each turn once' : 'maximum'));
  if (Object.values(cost.calls).some((call) => call.cost.tokens === Infinity))
    lines.push('  tokens are unbounded where a model call declares no maxTokens');
  if (spec.budget) {
    const limits = (['modelCalls', 'toolCalls', 'tokens'] as const)
      .filter((metric) => spec.budget![metric] !== undefined)
      .map((metric) => `${metric} ${spec.budget![metric]}`);
    lines.push(`  budget: ${limits.join(', ')} per ${spec.budget.per ?? 'turn'}`);
  }
  for (const problem of problems) lines.push(formatProblemLine(file, problem));
  return lines.map(escapeControlCharacters).join('\n') + '\n';
}
