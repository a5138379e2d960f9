/** The nav icon of the MCP servers page: plugs joined (stroke, decorative like the others). */
export const McpIcon = () => (
  <svg
    width={18}
    height={18}
    viewBox="0 0 24 24"
    fill="none"
    stroke="currentColor"
    strokeWidth="1.8"
    strokeLinecap="round"
    strokeLinejoin="round"
    aria-hidden="true"
    focusable="false"
  >
    <path d="M7 4v4M11 4v4M5 8h8v3a4 4 0 0 1-8 0V8zM9 15v2a3 3 0 0 0 3 3h2a3 3 0 0 0 3-3v-5M15 8h4" />
  </svg>
);
