import { compileExpression, compileTemplate, parseExpression, parseTemplate, type ExpressionRoot, type RootMapping } from '@flowing/spec';

/** Where an expression sits decides which roots it may read and how they are spelled in XState. */
export type ExpressionSite = 'event' | 'done' | 'error' | 'context';

const ROOTS: Record<ExpressionSite, ExpressionRoot[]> = {
  event: ['context', 'event'],
  done: ['context', 'output'],
  error: ['context', 'error'],
  context: ['context'],
};

const MAPPING: Record<ExpressionSite, RootMapping> = {
  event: {},
  done: { output: 'event.output' },
  error: { error: '(event.error as FlowError)' },
  context: {},
};

/** The lambda parameter list for a site. */
export function lambdaParams(site: ExpressionSite): string {
  return site === 'context' ? '({ context })' : '({ context, event })';
}

/** Compiles an already validated expression; throws on invalid input (validation runs before emission). */
export function expressionSource(source: string, site: ExpressionSite): string {
  const parsed = parseExpression(source, ROOTS[site]);
  if (!parsed.ok) throw new Error(`${parsed.error.code}: ${parsed.error.message}`);
  return compileExpression(parsed.ast, MAPPING[site]);
}

/** Compiles an already validated prompt template to a string expression. */
export function templateSource(source: string): string {
  const parsed = parseTemplate(source, ['context']);
  if (!parsed.ok) throw new Error(`${parsed.error.code}: ${parsed.error.message}`);
  return compileTemplate(parsed.parts, {}, 'asText');
}
