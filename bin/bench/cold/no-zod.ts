// What `zod` resolves to in the bare XState cold-start process without zod: the tools build their schemas from it
// at import and the session never uses them, as a team calling its tool functions directly would have none.
type Chain = ((...args: unknown[]) => Chain) & { [key: string]: Chain };

const chain: Chain = new Proxy((() => {}) as unknown as Chain, {
  get: (_target, key) => (key === 'then' ? undefined : chain),
  apply: () => chain,
});

export const z = chain;
export default chain;
