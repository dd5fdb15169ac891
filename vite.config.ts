import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The studio app. The studio API plugin (studio/server) is added by the studio issue.
export default defineConfig({
  root: 'studio',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true },
  server: { host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 5173), strictPort: false },
});
