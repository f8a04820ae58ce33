"""Two styles of autograd on one small linear model, y = W x + b with an MSE loss.

1. The tape: run the model, call `loss.backward()`, read `.grad` off each parameter.
2. Function transforms: the loss as a function of the parameters
   (`func.functional_call`), differentiated by `func.grad_and_value`.

Both give the same gradient. Then per-example gradients, which the tape cannot give in
one pass: `vmap(grad(loss))` maps the gradient of one example's loss over the batch.

    .venv/bin/python examples/two_styles.py
"""

import ember as torch
from ember import nn
from ember.func import functional_call, grad, grad_and_value, vmap

torch.manual_seed(0)
model = nn.Linear(3, 2)
x = torch.randn(8, 3)
y = torch.randn(8, 2)

# 1. the tape
loss = ((model(x) - y) ** 2).mean()
loss.backward()
tape = {name: p.grad for name, p in model.named_parameters()}


# 2. a function of the parameters
def loss_of(params, inputs, targets):
    return ((functional_call(model, params, (inputs,)) - targets) ** 2).mean()


params = {name: p.detach() for name, p in model.named_parameters()}
grads, value = grad_and_value(loss_of)(params, x, y)

print(f"loss: tape {loss.item():.6f}, functional {value.item():.6f}")
for name in params:
    diff = (grads[name] - tape[name]).abs().max().item()
    print(f"d loss / d {name:<6} max difference between the two styles: {diff:.1e}")
    assert torch.allclose(grads[name], tape[name], rtol=1e-5, atol=1e-6)


# per-example gradients: the loss of one example, its gradient, mapped over the batch
def example_loss(params, xi, yi):
    return ((functional_call(model, params, (xi,)) - yi) ** 2).mean()


per_example = vmap(grad(example_loss), in_dims=(None, 0, 0))(params, x, y)
print("per-example gradient of weight:", tuple(per_example["weight"].shape))
# their mean is the batch gradient (the batch loss is the mean of the examples' losses)
mean = per_example["weight"].mean(0)
assert torch.allclose(mean, tape["weight"], rtol=1e-5, atol=1e-6)
print(f"mean of per-example weight gradients equals the batch gradient: "
      f"{(mean - tape['weight']).abs().max().item():.1e}")
