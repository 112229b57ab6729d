"""Registers a second torch `AdamW`: a name clash that optreg must refuse."""


def rows(registry):
    from optreg.core.entry import optimizer

    return [optimizer("torch", "AdamW", "torch.optim:AdamW", "Another AdamW.")]
