import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { StudioError } from './errors.ts';

/** Host names the studio answers to by default; anything else is a DNS-rebinding attempt or a misconfiguration. */
export const LOOPBACK_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'] as const;

export interface GuardOptions {
  /** Host names (without port) accepted in `Host` and `Origin`; `[::1]` style for IPv6. */
  hostnames: readonly string[];
}

/** The host names a server bound to `host` accepts: the loopback names, plus `host` itself when it names one address. */
export function allowedHostnames(host: string | undefined): string[] {
  const names: string[] = [...LOOPBACK_HOSTNAMES];
  if (!host || host === '0.0.0.0' || host === '::' || host === '[::]') return names;
  const name = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  if (!names.includes(name.toLowerCase())) names.push(name.toLowerCase());
  return names;
}

function splitHost(value: string): { hostname: string; port: string } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(value);
  if (!match) return undefined;
  return { hostname: match[1]!.toLowerCase(), port: match[2] ?? '' };
}

function hostAllowed(value: string | undefined, port: number, options: GuardOptions): boolean {
  if (!value) return false;
  const parts = splitHost(value);
  // The port must match too: another server on the same machine is another origin.
  return parts !== undefined && options.hostnames.includes(parts.hostname) && parts.port === String(port);
}

function originAllowed(origin: string, port: number, options: GuardOptions): boolean {
  const match = /^http:\/\/(.+)$/.exec(origin);
  return match !== null && hostAllowed(match[1], port, options);
}

function isNavigation(req: IncomingMessage): boolean {
  const method = req.method ?? 'GET';
  return (method === 'GET' || method === 'HEAD') && req.headers['sec-fetch-mode'] === 'navigate';
}

/**
 * Decides whether a request may reach the studio (API or Vite's own routes); returns the refusal, or undefined.
 * `port` is the port the request arrived on (`req.socket.localPort`).
 */
export function checkRequest(req: IncomingMessage, port: number, options: GuardOptions, isApi: boolean): StudioError | undefined {
  const host = req.headers.host;
  if (!hostAllowed(host, port, options)) {
    return new StudioError(
      'STUDIO_FORBIDDEN_HOST',
      `host ${JSON.stringify(host ?? '')} is not this studio; open it at http://127.0.0.1:${port}/`,
    );
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !originAllowed(origin, port, options)) {
    return new StudioError(
      'STUDIO_FORBIDDEN_ORIGIN',
      `requests from origin ${JSON.stringify(origin)} are refused; only the studio page may call it`,
    );
  }
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    // A link from another site may open the studio page (the response is not readable by that site); nothing else may.
    if (isApi || !isNavigation(req)) {
      return new StudioError('STUDIO_FORBIDDEN_ORIGIN', `a ${String(site)} request is refused; only the studio page may call it`);
    }
  }
  return undefined;
}

/** Answers a refused WebSocket upgrade on the raw socket and closes it. */
export function refuseUpgrade(socket: Duplex, error: StudioError): void {
  const body = JSON.stringify(error.toJSON());
  socket.end(
    `HTTP/1.1 ${error.status} Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
