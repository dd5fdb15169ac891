// RELIABILITY X6: the request-body guarantees every studio server keeps (the built one and the Vite dev server).
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { RawResponse } from '../helpers/studio-server.ts';

export interface BodyLimitsTarget {
  port(): number;
  send(method: string, path: string): Promise<RawResponse>;
}

/** Registers the X6 tests against the server a test file started. */
export function describeBodyLimits(target: BodyLimitsTarget): void {
  /** Sends a body piece by piece over node:http and resolves with the first response, leaving the request open unless `end`. */
  function streamBody(
    path: string,
    headers: Record<string, string | number>,
    pieces: Buffer[],
    end: boolean,
  ): Promise<{ status: number; json: any }> {
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: target.port(), method: 'PUT', path, headers: { 'Content-Type': 'application/json', ...headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
            req.destroy();
          });
        },
      );
      req.on('error', (error) => {
        if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET' && (error as NodeJS.ErrnoException).code !== 'EPIPE') reject(error);
      });
      for (const piece of pieces) req.write(piece);
      if (end) req.end();
    });
  }

  describe('X6: request bodies', () => {
    const LIMIT = 1024 * 1024;
    const path = '/api/machines/order-support';

    it('refuses a body over 1 MiB with Content-Length with 413 STUDIO_BODY_TOO_LARGE', async () => {
      const body = Buffer.alloc(LIMIT + 1, 0x20);
      const response = await streamBody(path, { 'Content-Length': body.length }, [body], true);
      expect(response.status).toBe(413);
      expect(response.json.code).toBe('STUDIO_BODY_TOO_LARGE');
    });

    it('refuses a declared oversize body before reading it (the request is still open)', async () => {
      const response = await streamBody(path, { 'Content-Length': 50 * LIMIT }, [Buffer.from('{"spec":')], false);
      expect(response.status).toBe(413);
      expect(response.json.code).toBe('STUDIO_BODY_TOO_LARGE');
    });

    it('refuses a chunked body without Content-Length as soon as it passes the limit, before it ends', async () => {
      const pieces = Array.from({ length: 24 }, () => Buffer.alloc(64 * 1024, 0x20));
      const response = await streamBody(path, { 'Transfer-Encoding': 'chunked' }, pieces, false);
      expect(response.status).toBe(413);
      expect(response.json.code).toBe('STUDIO_BODY_TOO_LARGE');
    });

    it.each([
      ['arrays', '['.repeat(10_000) + ']'.repeat(10_000)],
      ['objects', '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000)],
      ['201 levels', '['.repeat(201) + ']'.repeat(201)],
    ])('refuses JSON nested 10k deep (%s) with 400 STUDIO_BAD_JSON', async (_name, nested) => {
      const body = `{"spec":${nested},"baseVersion":null}`;
      const response = await streamBody(path, { 'Content-Length': Buffer.byteLength(body) }, [Buffer.from(body)], true);
      expect(response.status).toBe(400);
      expect(response.json.code).toBe('STUDIO_BAD_JSON');
    });

    it('keeps serving normal requests afterwards', async () => {
      expect((await target.send('GET', '/api/machines')).status).toBe(200);
    });
  });
}
