/** An alarm clock (24×24 stroke), decorative: the text next to it is the label. */
export const ReminderIcon = () => (
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
    <circle cx="12" cy="13" r="7" />
    <path d="M12 9.5V13l2.5 1.5M5 4 2.5 6.5M19 4l2.5 2.5" />
  </svg>
);
