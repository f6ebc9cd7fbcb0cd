	using System;
namespace N.M;

[Serializable]
public record struct Unit : IEquatable<Unit>
{
    public static readonly Unit Value = new();
    public bool Equals(Unit other) => true;
    public override string ToString() { var s = $"()"; return @"{}" + s; }
    event EventHandler Changed;
    int P { get; set; } = 1;
}
