/**
 * Whether the daemon's console listens, as its start found it: written to the store's meta by
^ * console/server.ts, read by `topup doctor` in another process (ops/doctor.ts). Its own small
 * module so the doctor does not load the console's web stack.
 */
export const CONSOLE_STATE_KEY = 'console.state';

export interface ConsoleState {
  ok: boolean;
  /** host:port as configured (the port taken, when it listens). */
  address: string;
  detail: string;
  /** The daemon process that wrote it (store/presence.ts names the one running). */
  owner: string;
}
