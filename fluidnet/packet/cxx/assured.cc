// The Assured Service of Misra, Baras & Ott (Globecom 2000, Sec II) as ns-3 components, compiled
// at run time by cppyy (fluidnet.packet).
//
//   fluidnet::InProfileTag          marks a packet "in" its flow's profile (a packet without it is
//                                   "out").
//   fluidnet::ProfileMeterQueueDisc the edge conditioner: a FIFO on a source's access link that
//                                   meters every TCP flow (told apart by its source port) with a
//                                   token bucket of Rate bit/s and Depth packets and tags the
//                                   packets that find their size in tokens "in" (the paper's
//                                   leaky-bucket tagging, bucket 20 packets). Every packet of the
//                                   flow is metered, its handshake and pure ACKs too (with ECN
//                                   as DCTCP uses it, those are ECN-capable and could be marked).
//   fluidnet::OredQueueDisc         ORED, RED on "out" packets only: an arriving "out" packet is
//                                   ECN-marked with probability f_mark(avg), the linear profile
//                                   0 below MinTh, MaxP (avg - MinTh)/(MaxTh - MinTh) up to MaxTh,
//                                   MaxP above it (the paper's unnumbered profile of Sec II); "in"
//                                   packets are never marked; both are dropped only when the
//                                   buffer is full. avg is the EWMA of the queue (weight QW per
//                                   arrival, RED's decay over idle periods; QW = 1: the queue
//                                   itself). A marking probability, not RED's count-spaced drops:
//                                   the model marks each packet independently.

namespace fluidnet
{
using namespace ns3;

class InProfileTag : public Tag
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("fluidnet::InProfileTag")
                                .SetParent<Tag>()
                                .SetGroupName("Fluidnet")
                                .AddConstructor<InProfileTag>();
        return tid;
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    uint32_t GetSerializedSize() const override
    {
        return 1;
    }

    void Serialize(TagBuffer i) const override
    {
        i.WriteU8(1);
    }

    void Deserialize(TagBuffer i) override
    {
        i.ReadU8();
    }

    void Print(std::ostream& os) const override
    {
        os << "in-profile";
    }
};

class ProfileMeterQueueDisc : public FifoQueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::ProfileMeterQueueDisc")
                .SetParent<FifoQueueDisc>()
                .SetGroupName("Fluidnet")
                .AddConstructor<ProfileMeterQueueDisc>()
                .AddAttribute("Rate",
                              "Assured rate of every flow (bit/s of IP packets)",
                              DoubleValue(1e6),
                              MakeDoubleAccessor(&ProfileMeterQueueDisc::m_rate),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Depth",
                              "Token bucket depth (packets of PacketSize bytes)",
                              DoubleValue(20.0),
                              MakeDoubleAccessor(&ProfileMeterQueueDisc::m_depth),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("PacketSize",
                              "Size of a full packet (bytes), the unit of Depth",
                              UintegerValue(1000),
                              MakeUintegerAccessor(&ProfileMeterQueueDisc::m_packetSize),
                              MakeUintegerChecker<uint32_t>(1));
        return tid;
    }

    // Packets tagged "in" and metered so far.
    uint64_t GetInPackets() const
    {
        return m_in;
    }

    uint64_t GetMeteredPackets() const
    {
        return m_metered;
    }

  private:
    struct Bucket
    {
        double tokens; // bytes
        double last;   // time of the last update (s)
    };

    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
        Ptr<Packet> p = item->GetPacket();
        TcpHeader tcp;
        if (ip && ip->GetHeader().GetProtocol() == TcpL4Protocol::PROT_NUMBER &&
            p->PeekHeader(tcp) > 0)
        {
            double now = Simulator::Now().GetSeconds();
            double depth = m_depth * m_packetSize;
            auto found = m_buckets.find(tcp.GetSourcePort());
            if (found == m_buckets.end())
            {
                found = m_buckets.emplace(tcp.GetSourcePort(), Bucket{depth, now}).first;
            }
            Bucket& b = found->second;
            b.tokens = std::min(depth, b.tokens + (now - b.last) * m_rate / 8.0);
            b.last = now;
            double size = item->GetSize(); // the IP packet
            ++m_metered;
            if (b.tokens >= size)
            {
                b.tokens -= size;
                p->AddPacketTag(InProfileTag());
                ++m_in;
            }
        }
        return EnqueueIfRoom(item);
    }

    double m_rate{1e6};
    double m_depth{20.0};
    uint32_t m_packetSize{1000};
    uint64_t m_in{0};
    uint64_t m_metered{0};
    std::map<uint16_t, Bucket> m_buckets;
};

NS_OBJECT_ENSURE_REGISTERED(ProfileMeterQueueDisc);

class OredQueueDisc : public FifoQueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::OredQueueDisc")
                .SetParent<FifoQueueDisc>()
                .SetGroupName("Fluidnet")
                .AddConstructor<OredQueueDisc>()
                .AddAttribute("MinTh",
                              "Lower threshold on the average queue (packets)",
                              DoubleValue(20.0),
                              MakeDoubleAccessor(&OredQueueDisc::m_minTh),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("MaxTh",
                              "Upper threshold on the average queue (packets)",
                              DoubleValue(100.0),
                              MakeDoubleAccessor(&OredQueueDisc::m_maxTh),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("MaxP",
                              "Marking probability at and above MaxTh",
                              DoubleValue(0.01),
                              MakeDoubleAccessor(&OredQueueDisc::m_maxP),
                              MakeDoubleChecker<double>(0.0, 1.0))
                .AddAttribute("QW",
                              "EWMA weight of the queue per arriving packet (1: no averaging)",
                              DoubleValue(0.002),
                              MakeDoubleAccessor(&OredQueueDisc::m_qw),
                              MakeDoubleChecker<double>(0.0, 1.0))
                .AddAttribute("LinkRate",
                              "Link rate (bit/s), for the decay of the average while idle",
                              DoubleValue(1e7),
                              MakeDoubleAccessor(&OredQueueDisc::m_linkRate),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("MeanPktSize",
                              "Packet size (bytes) of the idle decay",
                              UintegerValue(1000),
                              MakeUintegerAccessor(&OredQueueDisc::m_meanPktSize),
                              MakeUintegerChecker<uint32_t>(1));
        return tid;
    }

    OredQueueDisc()
    {
        m_uv = CreateObject<UniformRandomVariable>();
    }

    // The marking profile f_mark of the average queue.
    double Profile(double avg) const
    {
        if (avg < m_minTh)
        {
            return 0.0;
        }
        if (avg < m_maxTh)
        {
            return m_maxP * (avg - m_minTh) / (m_maxTh - m_minTh);
        }
        return m_maxP;
    }

    double GetAverage() const
    {
        return m_avg;
    }

    uint64_t GetOutArrivals() const
    {
        return m_out;
    }

    uint64_t GetInArrivals() const
    {
        return m_inArrivals;
    }

  protected:
    void DoDispose() override
    {
        m_uv = nullptr;
        FifoQueueDisc::DoDispose();
    }

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        double q = GetInternalQueue(0)->GetNPackets();
        if (m_idle && q == 0)
        {
            // RED's decay of the average over an idle period: as if m packets of MeanPktSize had
            // arrived to an empty queue, m the packets the link could have sent meanwhile
            double idle = (Simulator::Now() - m_idleSince).GetSeconds();
            double m = idle * m_linkRate / (8.0 * m_meanPktSize);
            m_avg *= std::pow(1.0 - m_qw, m);
        }
        m_idle = false;
        m_avg = (1.0 - m_qw) * m_avg + m_qw * q;
        if (DropIfFull(item))
        {
            return false;
        }
        Ptr<Packet> p = item->GetPacket();
        InProfileTag tag;
        if (p->PeekPacketTag(tag))
        {
            ++m_inArrivals;
        }
        else
        {
            ++m_out;
            double f = Profile(m_avg);
            if (f > 0 && m_uv->GetValue() < f && !Mark(item, "ORED mark"))
            {
                DropBeforeEnqueue(item, "ORED drop (not ECN-capable)");
                return false;
            }
        }
        return GetInternalQueue(0)->Enqueue(item);
    }

    Ptr<QueueDiscItem> DoDequeue() override
    {
        Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
        if (GetInternalQueue(0)->GetNPackets() == 0 && !m_idle)
        {
            m_idle = true;
            m_idleSince = Simulator::Now();
        }
        return item;
    }

    void InitializeParams() override
    {
        m_avg = 0.0;
        m_idle = true;
        m_idleSince = Seconds(0);
    }

    double m_minTh{20.0};
    double m_maxTh{100.0};
    double m_maxP{0.01};
    double m_qw{0.002};
    double m_linkRate{1e7};
    uint32_t m_meanPktSize{1000};
    double m_avg{0.0};
    bool m_idle{true};
    Time m_idleSince;
    uint64_t m_out{0};
    uint64_t m_inArrivals{0};
    Ptr<UniformRandomVariable> m_uv;
};

NS_OBJECT_ENSURE_REGISTERED(OredQueueDisc);

} // namespace fluidnet
