"""The agent aggregate: sessions that register, and the advisory view of their claims."""
