import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: a single worker on CI's two. The slowest files
    // spend most of their time waiting on g++ and make in child processes, so one worker per core keeps
    // both cores busy (the whole suite ran in 19 minutes with one worker on two cores).
    maxWorkers: availableParallelism(),
  },
});
