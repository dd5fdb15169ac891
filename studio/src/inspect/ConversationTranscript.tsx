import { ConversationSchema, type ConversationMessage } from '@flowing/spec';
import { useMemo } from 'react';

type Message<TRole extends ConversationMessage['role']> = Extract<ConversationMessage, { role: TRole }>;

const argsText = (args: unknown) => JSON.stringify(args ?? {});

/**
 * A conversation field of the context as a chat transcript: what the person said, what each agent answered with the
 * tool calls it made (each shown with its result), and summaries of older messages. A value that is not a
 * conversation (a context edited by hand) is shown as JSON instead.
 */
export function ConversationTranscript({ field, value }: { field: string; value: unknown }) {
  const parsed = useMemo(() => ConversationSchema.safeParse(value ?? []), [value]);
  if (!parsed.success) {
    return (
      <div className="transcript" data-testid="inspect-conversation" data-field={field} data-valid="false">
        <h4>{field}</h4>
        <pre className="inspect-context__value">{JSON.stringify(value, null, 2)}</pre>
      </div>
    );
  }
  const messages = parsed.data;
  // A conversation only grows (summaries are added, nothing is rewritten): a message's position is its identity.
  const keyed = messages.map((message, position) => ({ message, key: `m${position}` }));
  // Results are shown with their call; one whose call is not in the list (cut off by a summary) stands alone.
  const results = new Map(messages.flatMap((m) => (m.role === 'tool' ? [[m.toolCallId, m] as const] : [])));
  const called = new Set(messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : [])));
  return (
    <div className="transcript" data-testid="inspect-conversation" data-field={field} data-count={messages.length}>
      <h4>
        {field} <span className="inspect-hint">{messages.length} messages</span>
      </h4>
      {messages.length === 0 && <p className="inspect-hint">No messages yet.</p>}
      <ol className="transcript__list">
        {keyed.map(({ message, key }) => {
          switch (message.role) {
            case 'user':
              return (
                <li key={key} className="transcript__msg transcript__msg--user" data-role="user">
                  {message.content}
                </li>
              );
            case 'assistant':
              return <AssistantMessage key={key} message={message} results={results} />;
            case 'tool':
              return called.has(message.toolCallId) ? null : (
                <li key={key} className="transcript__msg transcript__msg--tool" data-role="tool">
                  <ToolResult result={message} />
                </li>
              );
            case 'summary':
              return (
                <li key={key} className="transcript__msg transcript__msg--summary" data-role="summary">
                  <span className="transcript__label">Summary of {message.covers} earlier messages</span>
                  <p>{message.content}</p>
                  {Object.keys(message.facts).length > 0 && (
                    <dl className="transcript__facts">
                      {Object.entries(message.facts).map(([name, fact]) => (
                        <div key={name}>
                          <dt>{name}</dt>
                          <dd>{typeof fact === 'string' ? fact : JSON.stringify(fact)}</dd>
                        </div>
                      ))}
                    </dl>
                  )}
                </li>
              );
            default:
              return null;
          }
        })}
      </ol>
    </div>
  );
}

function AssistantMessage({ message, results }: { message: Message<'assistant'>; results: ReadonlyMap<string, Message<'tool'>> }) {
  return (
    <li className="transcript__msg transcript__msg--assistant" data-role="assistant">
      {message.agent && <span className="transcript__label">{message.agent}</span>}
      {message.content !== '' && <p>{message.content}</p>}
      {(message.toolCalls ?? []).map((call) => {
        const result = results.get(call.id);
        return (
          <div key={call.id} className="transcript__call" data-testid="transcript-tool-call" data-tool={call.name}>
            <code>
              {call.name}({argsText(call.args)})
            </code>
            {result ? <ToolResult result={result} /> : <span className="transcript__pending">no result</span>}
          </div>
        );
      })}
    </li>
  );
}

function ToolResult({ result }: { result: Message<'tool'> }) {
  return (
    <div
      className={result.ok ? 'transcript__result' : 'transcript__result transcript__result--failed'}
      data-testid="transcript-tool-result"
      data-ok={result.ok}
    >
      → <code>{result.content}</code>
    </div>
  );
}
