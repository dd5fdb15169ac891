import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Tarballs } from '../consumer/packs.ts';
import { REPO_DIR } from '../helpers/project.ts';

const run = promisify(execFile);

/** A running package registry on loopback: our packages from their tarballs, every other name from `upstream`. */
export interface LocalRegistry {
  /** The registry URL to give npm (`npm_config_registry`). */
  url: string;
  /** npm's environment for an install through this registry (the registry, and the native binding mirror). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * better-sqlite3's install script downloads a prebuilt binding (prebuild-install) and compiles SQLite for minutes
 * when it cannot. Users get the download; so do the tests: the binding the workspace built is served as that
 * download, from the same server (`npm_config_better_sqlite3_binary_host`), for this platform and Node ABI only.
 */
const NATIVE_BINDING = { name: 'better-sqlite3', file: 'build/Release/better_sqlite3.node' };

async function bindingTarball(): Promise<{ version: string; path: string; bytes: Buffer }> {
  const packageDir = join(REPO_DIR, 'node_modules', NATIVE_BINDING.name);
  const { version } = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const libc =
    process.platform === 'linux' &&
    !(process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime
      ? 'musl'
      : '';
  const name = `${NATIVE_BINDING.name}-v${version}-node-v${process.versions.modules}-${process.platform}${libc}-${process.arch}.tar.gz`;
  const { stdout } = await run('tar', ['czf', '-', '-C', packageDir, NATIVE_BINDING.file], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { version, path: `v${version}/${name}`, bytes: stdout };
}

/**
 * Serves the packed tarballs under their real names (`flowing`, `@flowing/runtime` ...), so a README line such as
 * `npm install --save-dev flowing` runs verbatim and installs this build, while third-party packages come from the
 * upstream registry (their packuments are passed through; their tarball URLs point upstream as they always do).
 */
export async function startLocalRegistry(tarballs: Tarballs, upstream = 'https://registry.npmjs.org/'): Promise<LocalRegistry> {
  const binding = await bindingTarball();
  const ours = new Map<string, { manifest: Record<string, unknown>; bytes: Buffer; file: string }>();
  for (const [name, path] of Object.entries(tarballs)) {
    const { stdout } = await run('tar', ['xzfO', path, 'package/package.json'], { maxBuffer: 4 * 1024 * 1024 });
    const bytes = await readFile(path);
    ours.set(name, {
      manifest: JSON.parse(stdout) as Record<string, unknown>,
      bytes,
      file: `${name.replace('/', '-').replace(/^@/, '')}.tgz`,
    });
  }
  const server: Server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://registry');
      const path = decodeURIComponent(url.pathname.slice(1));
      if (path === `-/bindings/${binding.path}`) {
        return void response.writeHead(200, { 'content-type': 'application/gzip' }).end(binding.bytes);
      }
      const tarball = /^-\/(.+\.tgz)$/.exec(path)?.[1];
      if (tarball) {
        const entry = [...ours.values()].find((candidate) => candidate.file === tarball);
        if (!entry) return void response.writeHead(404).end();
        return void response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(entry.bytes);
      }
      const entry = ours.get(path);
      if (entry) {
        const { address, port } = server.address() as AddressInfo;
        const version = String(entry.manifest.version);
        const integrity = `sha512-${createHash('sha512').update(entry.bytes).digest('base64')}`;
        const shasum = createHash('sha1').update(entry.bytes).digest('hex');
        const packument = {
          name: path,
          'dist-tags': { latest: version },
          versions: {
            [version]: {
              ...entry.manifest,
              _id: `${path}@${version}`,
              dist: { tarball: `http://${address}:${port}/-/${entry.file}`, integrity, shasum },
            },
          },
        };
        return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
      }
      // Everything else: the upstream registry's answer, passed through.
      const upstreamResponse = await fetch(new URL(url.pathname.slice(1) + url.search, upstream), {
        headers: { accept: request.headers.accept ?? 'application/json' },
      });
      const body = Buffer.from(await upstreamResponse.arrayBuffer());
      response
        .writeHead(upstreamResponse.status, { 'content-type': upstreamResponse.headers.get('content-type') ?? 'application/json' })
        .end(body);
    })().catch((error: Error) => {
      if (!response.headersSent) response.writeHead(502);
      response.end(String(error.message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/`;
  return {
    url,
    env: { npm_config_registry: url, [`npm_config_${NATIVE_BINDING.name.replace(/-/g, '_')}_binary_host`]: `${url}-/bindings` },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
