import type { ConversationMessage } from '@flowing/spec';

/** Counts the tokens of a text the way a model's tokenizer would, or estimates them. */
export interface TokenCounter {
  /** `gpt-tokenizer` (o200k, what current OpenAI models use) or `chars/4` (an estimate when it is not installed). */
  readonly name: 'gpt-tokenizer' | 'chars/4';
  count(text: string): number;
}

/** About four characters a token in English text: the estimate used when no tokenizer can be loaded. */
export const CHARS_PER_TOKEN_ESTIMATE: TokenCounter = { name: 'chars/4', count: (text) => Math.ceil(text.length / 4) };

/** Tokens a chat message costs around its content (role and separators), as OpenAI documents for its chat format. */
const MESSAGE_OVERHEAD_TOKENS = 4;

type TokenizerModule = { countTokens(text: string): number };

let shared: Promise<TokenCounter> | undefined;

/**
 * The token counter of this process: `gpt-tokenizer` (an optional peer of the runtime) when it can be imported, else
 * the chars/4 estimate. Loaded once; pass `load` to use another module (or a failing one).
 * @example const counter = await loadTokenCounter(); counter.count('hello')
 */
export function loadTokenCounter(load?: () => Promise<TokenizerModule>): Promise<TokenCounter> {
  if (load) return fromModule(load);
  shared ??= fromModule(() => import('gpt-tokenizer') as Promise<TokenizerModule>);
  return shared;
}

async function fromModule(load: () => Promise<TokenizerModule>): Promise<TokenCounter> {
  try {
    const tokenizer = await load();
    if (typeof tokenizer.countTokens !== 'function') return CHARS_PER_TOKEN_ESTIMATE;
    return { name: 'gpt-tokenizer', count: (text) => tokenizer.countTokens(text) };
  } catch {
    return CHARS_PER_TOKEN_ESTIMATE;
  }
}

/** The text of a message as a model reads it: its content, and the tool calls an assistant asked for. */
export function messageText(message: ConversationMessage): string {
  if (message.role === 'assistant' && message.toolCalls?.length)
    return `${message.content}${message.toolCalls.map((c) => `\n${c.name}(${JSON.stringify(c.args ?? null)})`).join('')}`;
  if (message.role === 'summary') return `${message.content}\n${JSON.stringify(message.facts)}`;
  return message.content;
}

/** The estimated tokens of a list of messages sent as a chat prompt. */
export function messagesTokens(counter: TokenCounter, messages: readonly ConversationMessage[]): number {
  let total = 0;
  for (const message of messages) total += MESSAGE_OVERHEAD_TOKENS + counter.count(messageText(message));
  return total;
}
