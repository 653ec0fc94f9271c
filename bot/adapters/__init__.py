"""Chat adapters: each turns one platform's updates into gateway messages and back."""
