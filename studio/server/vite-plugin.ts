import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Plugin, ViteDevServer } from 'vite';
import { isApiUrl } from './api-target.ts';
import { createStudioApp } from './app.ts';
import type { CaseChecker } from './cases.ts';
import { createStudioContext } from './context.ts';
import { allowedHostnames, checkRequest, refuseUpgrade, type GuardOptions } from './guard.ts';
import { createStudioListener, refusal, sendNodeError } from './listener.ts';

export interface StudioApiOptions {
  /** The project whose machines/ and tools/ the studio edits. */
  rootDir: string;
  /** Host names accepted in Host/Origin; default: localhost, 127.0.0.1, [::1] and the configured `server.host`. */
  hostnames?: string[];
  /** Checks a recorded case before "Save as case" writes it. */
  checkCase?: CaseChecker;
}

type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * Puts every `upgrade` listener (Vite's HMR WebSocket) behind the Host/Origin guard, so a rebinding page cannot open
 * the socket either. Listeners added later are moved behind the guard when the server starts listening.
 */
function guardUpgrades(httpServer: Server, options: GuardOptions): void {
  const inner: UpgradeListener[] = [];
  const guard: UpgradeListener = (req, socket, head) => {
    const refused = checkRequest(req, req.socket.localPort ?? 0, options, false);
    if (refused) {
      refuseUpgrade(socket, refused);
      return;
    }
    for (const listener of inner) listener.call(httpServer, req, socket, head);
  };
  const adopt = (): void => {
    for (const listener of httpServer.listeners('upgrade') as UpgradeListener[]) {
      if (listener === guard) continue;
      httpServer.off('upgrade', listener);
      inner.push(listener);
    }
    if (!httpServer.listeners('upgrade').includes(guard)) httpServer.on('upgrade', guard);
  };
  adopt();
  httpServer.once('listening', adopt);
}

/**
 * The studio's Vite plugin for `npm run dev:studio`: mounts the same Hono app as `flowing studio` (API only; Vite
 * serves the app with HMR) and guards every route of the dev server, Vite's own included, against foreign Host and
 * Origin headers.
 * @example plugins: [react(), studioApiPlugin({ rootDir: process.cwd() })]
 */
export function studioApiPlugin(options: StudioApiOptions): Plugin {
  return {
    name: 'flowing-studio-api',
    apply: 'serve',
    async configureServer(server: ViteDevServer) {
      const context = await createStudioContext(options.rootDir, { checkCase: options.checkCase });
      const host = server.config.server.host;
      const guard: GuardOptions = { hostnames: options.hostnames ?? allowedHostnames(typeof host === 'string' ? host : undefined) };
      const api = createStudioListener(createStudioApp({ context }).app, guard, { overrideGlobalObjects: false });
      const handle = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void => {
        const isApi = isApiUrl(req.url);
        const refused = refusal(req, guard, isApi);
        if (refused) sendNodeError(res, refused);
        else if (isApi) api(req, res);
        else next();
      };
      // Vite's own middlewares (host check, transforms, /@fs/) are already on the stack: the guard goes first so
      // it decides for every route and answers refusals with our codes.
      server.middlewares.stack.unshift({ route: '', handle });
      if (server.httpServer) {
        guardUpgrades(server.httpServer as Server, guard);
        server.httpServer.once('close', () => context.dispose());
      }
    },
  };
}
