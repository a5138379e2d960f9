export * from './errors.js';
export * from './audit.js';
export * from './policy.js';
export * from './connection.js';
export * from './chat.js';
export * from './commands.js';
export * from './bridge.js';
export * from './reminders.js';
