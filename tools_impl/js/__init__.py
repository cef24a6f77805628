"""What it takes to behave like Node.js: JavaScript string semantics, number formatting, Node error texts."""
