import {
  budgetProblems,
  computeCost,
  costForJson,
  escapeControlCharacters,
  formatAmount,
  formatProblemLine,
  problemForJson,
  stringifyJsonSafely,
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
  return `  ${model.padStart(WIDTH)} ${tool.padStart(WIDTH)} ${tokens.padStart(WIDTH)}  ${what}\n`;
}

function costLine(row: { cost: MachineCost['maximum']['turn'] }, what: string): string {
  return line(formatAmount(row.cost.modelCalls), formatAmount(row.cost.toolCalls), formatAmount(row.cost.tokens), what);
}

function turnText(row: CostRow): string {
  const head = row.from === '(start)' ? '(start) →' : `${row.from} --${row.event}-->`;
  return `${head} ${row.states.join(' → ')}`;
}

function reportText({ file, spec, cost, problems }: Report): string {
  let out = `${cost.machineId} (${file})\n`;
  if (cost.perTurn) {
    out += '  per turn: from the start or an event to the next waiting or final state (a chat loop is counted per turn)\n';
  }
  out += line('model calls', 'tool calls', 'tokens', cost.perTurn ? 'turn' : 'path');
  for (const row of cost.turns) out += costLine(row, turnText(row));
  if (cost.perTurn) {
    out += line(
      '',
      '',
      '',
      cost.approximate
        ? 'paths to a final state: too many to list, every turn counted once'
        : 'paths to a final state, each turn counted once',
    );
    for (const row of cost.paths)
      out += costLine(row, `→ ${row.to}: ${row.states.length > 0 ? row.states.join(' → ') : 'every turn once'}`);
    out += costLine({ cost: cost.maximum.turn }, 'maximum per turn');
  }
  out += costLine({ cost: cost.maximum.session }, cost.perTurn ? 'maximum per path, each turn once' : 'maximum');
  if (Object.values(cost.calls).some((call) => call.cost.tokens === Infinity)) {
    out += '  tokens are unbounded where a model call declares no maxTokens\n';
  }
  if (spec.budget) {
    const limits = (['modelCalls', 'toolCalls', 'tokens'] as const)
      .filter((m) => spec.budget![m] !== undefined)
      .map((m) => `${m} ${spec.budget![m]}`);
    out += `  budget: ${limits.join(', ')} per ${spec.budget.per ?? 'turn'}\n`;
  }
  for (const problem of problems) out += formatProblemLine(file, problem) + '\n';
  return escapeControlCharacters(out.slice(0, -1)).replaceAll('\\n', '\n') + '\n';
}
